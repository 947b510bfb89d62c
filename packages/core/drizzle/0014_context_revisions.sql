-- Which transaction last changed a participant row (see ParticipantsCache in
-- src/spaces/context-cache.ts): a node that has a space's participants as of a snapshot reads only
-- the rows whose last writer that snapshot does not see, instead of every participant on every
-- send. The trigger stamps every update that changes the row, whatever statement makes it, so no
-- write can be missed; inserts take the column's default. The index finds a space's rows changed
-- since a snapshot's xmin without reading the others.
ALTER TABLE participants ADD COLUMN changed_by xid8 NOT NULL DEFAULT pg_current_xact_id();
--> statement-breakpoint
CREATE INDEX participants_changed_idx ON participants (space_id, changed_by);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION participants_stamp_changed_by() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.changed_by := pg_current_xact_id();
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER participants_changed_by BEFORE UPDATE ON participants
  FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION participants_stamp_changed_by();
