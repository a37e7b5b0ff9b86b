CREATE TABLE `alerts` (
	`key` text PRIMARY KEY NOT NULL,
	`rule` text NOT NULL,
	`agent` text,
	`model` text,
	`sig` text,
	`summary` text NOT NULL,
	`fired_at` integer NOT NULL,
	`cool_until` integer NOT NULL,
	`times_fired` integer DEFAULT 1 NOT NULL,
	`status` text NOT NULL,
	`tries` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE INDEX `alerts_sig_idx` ON `alerts` (`sig`);--> statement-breakpoint
CREATE INDEX `node_runs_agent_started_idx` ON `node_runs` (`agent`,`started_at`);