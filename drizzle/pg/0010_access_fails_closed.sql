CREATE TABLE "audit_events" (
	"id" text PRIMARY KEY NOT NULL,
	"at" bigint NOT NULL,
	"kind" text NOT NULL,
	"actor" text,
	"address" text,
	"target" text,
	"detail" text
);
--> statement-breakpoint
CREATE TABLE "caller_spend" (
	"caller" text NOT NULL,
	"day" text NOT NULL,
	"usd" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "caller_spend_caller_day_pk" PRIMARY KEY("caller","day")
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "budget_usd_per_day" double precision;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "budget_usd_per_day" double precision;--> statement-breakpoint
CREATE INDEX "audit_events_at_idx" ON "audit_events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_events_actor_idx" ON "audit_events" USING btree ("actor","at");--> statement-breakpoint
CREATE INDEX "audit_events_kind_idx" ON "audit_events" USING btree ("kind","at");--> statement-breakpoint
-- sessions were stored with their raw token: every one is ended once, and new ones keep only its sha256
DELETE FROM "sessions";