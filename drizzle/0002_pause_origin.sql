ALTER TABLE `rate_limit_pauses` ADD `set_at` integer;--> statement-breakpoint
ALTER TABLE `rate_limit_pauses` ADD `server_wait` text;--> statement-breakpoint
ALTER TABLE `rate_limit_pauses` ADD `asked_ms` integer;--> statement-breakpoint
ALTER TABLE `rate_limit_pauses` ADD `max_wait_ms` integer;--> statement-breakpoint
-- A pause stored before pauses were capped (e.g. until year 9999, from a far-future retry-after) ends at most
-- 60 s (the default on_rate_limit.max_wait) after this migration, instead of blocking the model for good.
UPDATE `rate_limit_pauses` SET `paused_until` = min(`paused_until`, CAST(strftime('%s', 'now') AS INTEGER) * 1000 + 60000);