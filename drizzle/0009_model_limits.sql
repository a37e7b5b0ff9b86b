CREATE TABLE `model_limits` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`model` text NOT NULL,
	`dimension` text NOT NULL,
	`settings_key` text NOT NULL,
	`settings` text NOT NULL,
	`measured_on` text NOT NULL,
	`status` text NOT NULL,
	`last_held` integer,
	`first_failed` integer,
	`levels` text NOT NULL,
	`calls` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`run_id` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `model_limits_key_idx` ON `model_limits` (`model`,`dimension`,`settings_key`,`measured_on`);--> statement-breakpoint
CREATE INDEX `model_limits_model_idx` ON `model_limits` (`model`,`updated_at`);--> statement-breakpoint
CREATE INDEX `notes_node_run_idx` ON `notes` (`node_run_id`);--> statement-breakpoint
CREATE INDEX `notes_attempt_idx` ON `notes` (`attempt_id`);