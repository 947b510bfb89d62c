CREATE TABLE "ask_documents" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"path" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"body" text NOT NULL,
	"data" jsonb NOT NULL,
	"hash" text NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english', "ask_documents"."name"), 'A') || setweight(to_tsvector('english', "ask_documents"."description"), 'B') || setweight(to_tsvector('english', "ask_documents"."body"), 'C')) STORED NOT NULL
);
--> statement-breakpoint
CREATE INDEX "ask_documents_search_idx" ON "ask_documents" USING gin ("search");