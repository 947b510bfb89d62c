ALTER TABLE "idempotency_records" ADD COLUMN "outcome" jsonb;--> statement-breakpoint
-- Claims of the old protocol (committed before the write) would block a retry until their lease ended.
DELETE FROM "idempotency_records" WHERE "state" = 'running';
