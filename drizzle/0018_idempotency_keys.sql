CREATE TABLE `idempotency_keys` (
	`caller` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`run_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`caller`, `key`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_run_idx` ON `idempotency_keys` (`run_id`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);