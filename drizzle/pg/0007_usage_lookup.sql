ALTER TABLE "transport_tries" ADD COLUMN "generation_id" text;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "usage_lookup" text;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "lookup_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "lookup_after" bigint;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "input_tokens" bigint;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "output_tokens" bigint;--> statement-breakpoint
ALTER TABLE "transport_tries" ADD COLUMN "cost_usd" double precision;--> statement-breakpoint
CREATE INDEX "transport_tries_lookup_idx" ON "transport_tries" USING btree ("lookup_after") WHERE lookup_after IS NOT NULL;