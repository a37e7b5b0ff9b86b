CREATE TABLE "replay_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"label" text NOT NULL,
	"started_by" text,
	"started_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"finished_at" bigint,
	"owner" text NOT NULL,
	"total" integer NOT NULL,
	"succeeded" integer DEFAULT 0 NOT NULL,
	"spent_usd" double precision DEFAULT 0 NOT NULL,
	"cap_usd" double precision,
	"stopped" text,
	"progress" json NOT NULL
);
--> statement-breakpoint
CREATE INDEX "replay_batches_started_idx" ON "replay_batches" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "replay_batches_label_idx" ON "replay_batches" USING btree ("label","started_at");