ALTER TABLE `attempts` ADD `reasoning_tokens` integer;--> statement-breakpoint
ALTER TABLE `attempts` ADD `cost_source` text;