CREATE TABLE "alerts" (
	"key" text PRIMARY KEY NOT NULL,
	"rule" text NOT NULL,
	"agent" text,
	"model" text,
	"sig" text,
	"summary" text NOT NULL,
	"fired_at" bigint NOT NULL,
	"cool_until" bigint NOT NULL,
	"times_fired" integer DEFAULT 1 NOT NULL,
	"status" text NOT NULL,
	"tries" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"delivered_at" bigint
);
--> statement-breakpoint
CREATE INDEX "alerts_sig_idx" ON "alerts" USING btree ("sig");--> statement-breakpoint
CREATE INDEX "node_runs_agent_started_idx" ON "node_runs" USING btree ("agent","started_at");