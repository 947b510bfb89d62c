CREATE TABLE "inbox_entries" (
	"space_id" uuid NOT NULL,
	"participant_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"event_seq" bigint NOT NULL,
	"mention" boolean NOT NULL,
	"reply" boolean NOT NULL,
	CONSTRAINT "inbox_entries_space_id_participant_id_seq_pk" PRIMARY KEY("space_id","participant_id","seq")
);
--> statement-breakpoint
CREATE TABLE "mcp_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_subscriptions" (
	"session_id" text NOT NULL,
	"uri" text NOT NULL,
	"space_id" uuid NOT NULL,
	"participant_id" uuid NOT NULL,
	"from_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "mcp_subscriptions_session_id_uri_pk" PRIMARY KEY("session_id","uri")
);
--> statement-breakpoint
CREATE TABLE "send_budgets" (
	"space_id" uuid NOT NULL,
	"participant_id" uuid NOT NULL,
	"window_ends_at" timestamp (3) with time zone NOT NULL,
	"used" integer NOT NULL,
	CONSTRAINT "send_budgets_space_id_participant_id_pk" PRIMARY KEY("space_id","participant_id")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"webhook_id" uuid NOT NULL,
	"payload" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"locked_until" timestamp (3) with time zone,
	CONSTRAINT "webhook_deliveries_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"participant_id" uuid NOT NULL,
	"url" text NOT NULL,
	"events" text[],
	"secret_enc" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_success_at" timestamp (3) with time zone,
	"last_failure_at" timestamp (3) with time zone,
	"last_error" text,
	"failures" integer DEFAULT 0 NOT NULL,
	"disabled_at" timestamp (3) with time zone,
	"cursor_seq" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "webhooks_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "mentions" uuid[];--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "reply_to" uuid;--> statement-breakpoint
ALTER TABLE "participants" ADD COLUMN "last_seen_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "participants" ADD COLUMN "last_read_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spaces" ADD COLUMN "max_messages_per_minute" integer;--> statement-breakpoint
ALTER TABLE "spaces" ADD COLUMN "has_webhooks" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "mcp_sessions_expires_at_idx" ON "mcp_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_space_id_idx" ON "messages" USING btree ("space_id","id");