CREATE TABLE `replay_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`label` text NOT NULL,
	`started_by` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	`owner` text NOT NULL,
	`total` integer NOT NULL,
	`succeeded` integer DEFAULT 0 NOT NULL,
	`spent_usd` real DEFAULT 0 NOT NULL,
	`cap_usd` real,
	`stopped` text,
	`progress` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `replay_batches_started_idx` ON `replay_batches` (`started_at`);--> statement-breakpoint
CREATE INDEX `replay_batches_label_idx` ON `replay_batches` (`label`,`started_at`);