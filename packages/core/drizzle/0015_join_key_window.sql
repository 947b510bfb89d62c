-- When a private-space joiner first collected its key (getJoinStatus): the same joiner may collect
-- it again for a while (an answer lost on the way), then the sweep clears the ticket and the sealed
-- key. The partial index finds the tickets to clear without reading the other participants.
ALTER TABLE "participants" ADD COLUMN "key_collected_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "participants_key_collected_idx" ON "participants" USING btree ("key_collected_at") WHERE key_collected_at is not null;