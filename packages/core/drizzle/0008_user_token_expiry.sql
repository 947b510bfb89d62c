ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
-- Tokens minted before tokens expired get the default lifetime (90 days) from now.
UPDATE "api_tokens" SET "expires_at" = now() + interval '90 days' WHERE "expires_at" IS NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "expires_at" SET NOT NULL;
