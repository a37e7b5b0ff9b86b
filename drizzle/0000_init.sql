CREATE TABLE `attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`node_run_id` text NOT NULL,
	`run_id` text NOT NULL,
	`seq` integer NOT NULL,
	`model` text NOT NULL,
	`chain_index` integer NOT NULL,
	`answer_no` integer NOT NULL,
	`outcome` text,
	`finish_reason` text,
	`native_finish_reason` text,
	`cause` text,
	`action` text,
	`request` text,
	`response_text` text,
	`error_kind` text,
	`error_message` text,
	`error_detail` text,
	`validation_errors` text,
	`discarded` integer DEFAULT false NOT NULL,
	`streamed_text` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`node_run_id`) REFERENCES `node_runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attempts_node_run_idx` ON `attempts` (`node_run_id`,`seq`);--> statement-breakpoint
CREATE INDEX `attempts_run_idx` ON `attempts` (`run_id`);--> statement-breakpoint
CREATE INDEX `attempts_model_idx` ON `attempts` (`model`,`run_id`);--> statement-breakpoint
CREATE INDEX `attempts_cause_idx` ON `attempts` (`cause`,`run_id`) WHERE cause IS NOT NULL;--> statement-breakpoint
CREATE INDEX `attempts_action_idx` ON `attempts` (`action`,`run_id`) WHERE action IN ('retry', 'repair', 'fallback');--> statement-breakpoint
CREATE TABLE `node_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`node_id` text NOT NULL,
	`agent` text NOT NULL,
	`turn` integer NOT NULL,
	`status` text NOT NULL,
	`output` text,
	`error_code` text,
	`error_message` text,
	`hint` text,
	`policy` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `node_runs_run_idx` ON `node_runs` (`run_id`,`turn`);--> statement-breakpoint
CREATE INDEX `node_runs_agent_idx` ON `node_runs` (`agent`,`run_id`);--> statement-breakpoint
CREATE TABLE `policy_revisions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent` text NOT NULL,
	`revision` integer NOT NULL,
	`yaml` text NOT NULL,
	`diff` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `policy_revisions_agent_idx` ON `policy_revisions` (`agent`,`revision`);--> statement-breakpoint
CREATE TABLE `rate_limit_pauses` (
	`model` text PRIMARY KEY NOT NULL,
	`paused_until` integer NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`project` text NOT NULL,
	`flow` text NOT NULL,
	`status` text NOT NULL,
	`input` text,
	`output` text,
	`error_code` text,
	`error_node` text,
	`error_message` text,
	`error_hint` text,
	`turns` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`pid` integer,
	`started_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `runs_started_at_idx` ON `runs` (`started_at`);--> statement-breakpoint
CREATE INDEX `runs_status_idx` ON `runs` (`status`,`started_at`);--> statement-breakpoint
CREATE INDEX `runs_flow_idx` ON `runs` (`flow`,`started_at`);--> statement-breakpoint
CREATE TABLE `transport_tries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`attempt_id` text NOT NULL,
	`try_no` integer NOT NULL,
	`status` integer,
	`error` text,
	`retry_after_ms` integer,
	`waited_ms` integer DEFAULT 0 NOT NULL,
	`discarded_text` text,
	`started_at` integer NOT NULL,
	`finished_at` integer NOT NULL,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `transport_tries_attempt_idx` ON `transport_tries` (`attempt_id`,`try_no`);