CREATE TABLE `agent_daily` (
	`agent` text NOT NULL,
	`day` integer NOT NULL,
	`model` text NOT NULL,
	`outcome` text NOT NULL,
	`cause` text NOT NULL,
	`action` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`duration_ms` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`agent`, `day`, `model`, `outcome`, `cause`, `action`)
);
--> statement-breakpoint
CREATE TABLE `failure_daily` (
	`sig` text NOT NULL,
	`day` integer NOT NULL,
	`level` text NOT NULL,
	`agent` text NOT NULL,
	`model` text NOT NULL,
	`code` text NOT NULL,
	`message` text NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`sig`, `day`)
);
--> statement-breakpoint
CREATE INDEX `failure_daily_day_idx` ON `failure_daily` (`day`);--> statement-breakpoint
CREATE TABLE `node_daily` (
	`agent` text NOT NULL,
	`day` integer NOT NULL,
	`status` text NOT NULL,
	`nodes` integer DEFAULT 0 NOT NULL,
	`last_started_at` integer,
	PRIMARY KEY(`agent`, `day`, `status`)
);
--> statement-breakpoint
CREATE TABLE `notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`node_run_id` text,
	`attempt_id` text,
	`author` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_run_id`) REFERENCES `node_runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notes_run_idx` ON `notes` (`run_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `search_docs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`node_run_id` text,
	`attempt_id` text,
	`field` text NOT NULL,
	`body` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `search_docs_run_idx` ON `search_docs` (`run_id`);--> statement-breakpoint
ALTER TABLE `attempts` ADD `failure_sig` text;--> statement-breakpoint
CREATE INDEX `attempts_failure_idx` ON `attempts` (`failure_sig`,`started_at`) WHERE failure_sig IS NOT NULL;--> statement-breakpoint
ALTER TABLE `node_runs` ADD `failure_sig` text;--> statement-breakpoint
CREATE INDEX `node_runs_failure_idx` ON `node_runs` (`failure_sig`,`started_at`) WHERE failure_sig IS NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `kind` text DEFAULT 'flow' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `replay_of` text REFERENCES runs(id) ON DELETE SET NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `replay_node` text;--> statement-breakpoint
CREATE INDEX `runs_kind_idx` ON `runs` (`kind`,`started_at`);--> statement-breakpoint
CREATE INDEX `runs_replay_of_idx` ON `runs` (`replay_of`);--> statement-breakpoint
-- full-text index of search_docs (hand-written: FTS5 is SQLite's own, drizzle does not describe it)
CREATE VIRTUAL TABLE `search_fts` USING fts5(body, content='search_docs', content_rowid='id');--> statement-breakpoint
CREATE TRIGGER `search_docs_fts_insert` AFTER INSERT ON `search_docs` BEGIN INSERT INTO search_fts(rowid, body) VALUES (new.id, new.body); END;--> statement-breakpoint
CREATE TRIGGER `search_docs_fts_delete` AFTER DELETE ON `search_docs` BEGIN INSERT INTO search_fts(search_fts, rowid, body) VALUES ('delete', old.id, old.body); END;
