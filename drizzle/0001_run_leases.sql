ALTER TABLE `runs` ADD `owner` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `fence` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `heartbeat_at` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `lease_expires_at` integer;