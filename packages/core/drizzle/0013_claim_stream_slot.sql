-- One round trip per stream opened (see claimStreamSlot in src/events/stream-slots.ts): advisory
-- locks on the credential and the address, always in that order, then the count and the insert.
-- A VOLATILE function takes a fresh snapshot for each statement, so the count sees every slot
-- committed before the locks were granted. Returns NULL when the slot is taken, else the cap
-- that refused it ('key' or 'address').
CREATE OR REPLACE FUNCTION claim_stream_slot(
  p_slot uuid,
  p_node uuid,
  p_credential text,
  p_address text,
  p_per_credential integer,
  p_per_address integer,
  p_releasing uuid[]
) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  by_credential bigint;
  by_address bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('stream-slots:credential:' || p_credential, 0));
  PERFORM pg_advisory_xact_lock(hashtextextended('stream-slots:address:' || p_address, 0));
  SELECT count(*) FILTER (WHERE s.credential = p_credential),
         count(*) FILTER (WHERE s.address = p_address)
    INTO by_credential, by_address
    FROM stream_slots s LEFT JOIN stream_nodes n ON n.id = s.node_id
    WHERE (s.credential = p_credential OR s.address = p_address)
      -- The claiming node's own slots always count; another node's while its lease runs.
      AND (s.node_id = p_node OR n.alive_until > now())
      -- Slots the claiming node has given back but not yet deleted.
      AND s.id <> ALL (p_releasing);
  IF by_credential >= p_per_credential THEN
    RETURN 'key';
  END IF;
  IF by_address >= p_per_address THEN
    RETURN 'address';
  END IF;
  INSERT INTO stream_slots (id, node_id, credential, address, opened_at)
    VALUES (p_slot, p_node, p_credential, p_address, now());
  RETURN NULL;
END
$$;
