CREATE TABLE "stream_nodes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"alive_until" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stream_slots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"node_id" uuid NOT NULL,
	"credential" text NOT NULL,
	"address" text NOT NULL,
	"opened_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "stream_slots_credential_idx" ON "stream_slots" USING btree ("credential");--> statement-breakpoint
CREATE INDEX "stream_slots_address_idx" ON "stream_slots" USING btree ("address");--> statement-breakpoint
CREATE INDEX "stream_slots_node_id_idx" ON "stream_slots" USING btree ("node_id");