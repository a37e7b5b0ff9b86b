ALTER TABLE `transport_tries` ADD `generation_id` text;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `usage_lookup` text;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `lookup_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `lookup_after` integer;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `input_tokens` integer;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `output_tokens` integer;--> statement-breakpoint
ALTER TABLE `transport_tries` ADD `cost_usd` real;--> statement-breakpoint
CREATE INDEX `transport_tries_lookup_idx` ON `transport_tries` (`lookup_after`) WHERE lookup_after IS NOT NULL;