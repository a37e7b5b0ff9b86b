ALTER TABLE `runs` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `traceparent` text;