ALTER TABLE `attempts` ADD `in_flight_try` integer;--> statement-breakpoint
ALTER TABLE `attempts` ADD `in_flight_at` integer;