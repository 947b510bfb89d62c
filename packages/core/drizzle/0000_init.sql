CREATE TABLE "artifact_versions" (
	"space_id" uuid NOT NULL,
	"artifact_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"content" text NOT NULL,
	"updated_by" uuid NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "artifact_versions_space_id_artifact_id_version_pk" PRIMARY KEY("space_id","artifact_id","version")
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"content" text NOT NULL,
	"version" integer NOT NULL,
	"created_by" uuid NOT NULL,
	"updated_by" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"locked_by" uuid,
	"locked_at" timestamp (3) with time zone,
	"lock_expires_at" timestamp (3) with time zone,
	CONSTRAINT "artifacts_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
CREATE TABLE "idempotency_records" (
	"scope" text PRIMARY KEY NOT NULL,
	"request_hash" text NOT NULL,
	"state" text NOT NULL,
	"status" integer,
	"headers" jsonb,
	"body" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"points" integer NOT NULL,
	"expire" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invitations" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "invitations_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"event_seq" bigint NOT NULL,
	"sender_id" uuid NOT NULL,
	"sender_name" text NOT NULL,
	"is_owner" boolean NOT NULL,
	"type" text NOT NULL,
	"content" text NOT NULL,
	"created_at" timestamp(6) with time zone NOT NULL,
	CONSTRAINT "messages_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
CREATE TABLE "participants" (
	"space_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"name" text NOT NULL,
	"role" text DEFAULT '' NOT NULL,
	"is_owner" boolean DEFAULT false NOT NULL,
	"is_human" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"key_hash" text,
	"key_enc" text,
	"invitation_id" uuid,
	"user_id" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "participants_space_id_id_pk" PRIMARY KEY("space_id","id")
);
--> statement-breakpoint
CREATE TABLE "space_events" (
	"space_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"kind" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "space_events_space_id_seq_pk" PRIMARY KEY("space_id","seq")
);
--> statement-breakpoint
CREATE TABLE "spaces" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"agenda" text DEFAULT '' NOT NULL,
	"privacy" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"ttl_seconds" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"closed_at" timestamp (3) with time zone,
	"message_seq" bigint DEFAULT 0 NOT NULL,
	"event_seq" bigint DEFAULT 0 NOT NULL,
	"last_message_at" timestamp(6) with time zone
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "link_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"device_code_hash" text NOT NULL,
	"user_code" text NOT NULL,
	"agent_name" text,
	"status" text NOT NULL,
	"user_id" uuid,
	"token_enc" text,
	"token_id" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"password_hash" text,
	"external_subject" text,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_key_hash_idx" ON "invitations" USING btree ("key_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_space_seq_idx" ON "messages" USING btree ("space_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_space_created_idx" ON "messages" USING btree ("space_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_space_event_seq_idx" ON "messages" USING btree ("space_id","event_seq");--> statement-breakpoint
CREATE UNIQUE INDEX "participants_key_hash_idx" ON "participants" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "participants_user_idx" ON "participants" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "spaces_public_open_idx" ON "spaces" USING btree ("created_at") WHERE "spaces"."privacy" = 'public' and "spaces"."state" = 'open';--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_idx" ON "api_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "api_tokens_user_idx" ON "api_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "link_requests_device_code_idx" ON "link_requests" USING btree ("device_code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "link_requests_user_code_idx" ON "link_requests" USING btree ("user_code");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_idx" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "users_external_subject_idx" ON "users" USING btree ("external_subject");