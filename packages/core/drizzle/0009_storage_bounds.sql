ALTER TABLE "invitations" ADD COLUMN "joins" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spaces" ADD COLUMN "artifact_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "spaces_expires_at_idx" ON "spaces" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "spaces_closed_at_idx" ON "spaces" USING btree ("closed_at") WHERE "spaces"."closed_at" is not null;--> statement-breakpoint
-- Spaces written before the bound count what they already store.
UPDATE "spaces" SET "artifact_bytes" = v.bytes FROM (SELECT "space_id", sum(octet_length("content")) AS bytes FROM "artifact_versions" GROUP BY "space_id") v WHERE v."space_id" = "spaces"."id";
--> statement-breakpoint
-- Joins made before the bound count against their invitation.
UPDATE "invitations" SET "joins" = j.n FROM (SELECT "invitation_id", count(*) AS n FROM "participants" WHERE "invitation_id" IS NOT NULL GROUP BY "invitation_id") j WHERE j."invitation_id" = "invitations"."id";
