ALTER TABLE "attempts" ADD COLUMN "reasoning_tokens" bigint;--> statement-breakpoint
ALTER TABLE "attempts" ADD COLUMN "cost_source" text;