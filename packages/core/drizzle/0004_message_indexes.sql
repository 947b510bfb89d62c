DROP INDEX "messages_space_seq_idx";--> statement-breakpoint
DROP INDEX "messages_space_event_seq_idx";--> statement-breakpoint
ALTER TABLE "messages" DROP CONSTRAINT "messages_space_id_id_pk";--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_space_id_event_seq_pk" PRIMARY KEY("space_id","event_seq");