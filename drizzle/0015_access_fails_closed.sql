CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`kind` text NOT NULL,
	`actor` text,
	`address` text,
	`target` text,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_events_at_idx` ON `audit_events` (`at`);--> statement-breakpoint
CREATE INDEX `audit_events_actor_idx` ON `audit_events` (`actor`,`at`);--> statement-breakpoint
CREATE INDEX `audit_events_kind_idx` ON `audit_events` (`kind`,`at`);--> statement-breakpoint
CREATE TABLE `caller_spend` (
	`caller` text NOT NULL,
	`day` text NOT NULL,
	`usd` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`caller`, `day`)
);
--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `budget_usd_per_day` real;--> statement-breakpoint
ALTER TABLE `users` ADD `budget_usd_per_day` real;--> statement-breakpoint
-- sessions were stored with their raw token: every one is ended once, and new ones keep only its sha256
DELETE FROM `sessions`;