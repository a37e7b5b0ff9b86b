CREATE TABLE `project_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`files` text NOT NULL,
	`hash` text NOT NULL,
	`author` text,
	`note` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `project_snapshots_created_idx` ON `project_snapshots` (`created_at`);--> statement-breakpoint
CREATE TABLE `workers` (
	`id` text PRIMARY KEY NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`concurrency` integer NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`started_at` integer NOT NULL,
	`seen_at` integer NOT NULL,
	`stopped_at` integer
);
--> statement-breakpoint
ALTER TABLE `node_runs` ADD `ord` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `policy_revisions` ADD `author` text;--> statement-breakpoint
ALTER TABLE `policy_revisions` ADD `snapshot_id` integer;--> statement-breakpoint
ALTER TABLE `rate_limit_pauses` ADD `probe_owner` text;--> statement-breakpoint
ALTER TABLE `rate_limit_pauses` ADD `probe_until` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `snapshot_id` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `queued_at` integer;