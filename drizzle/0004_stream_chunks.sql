CREATE TABLE `stream_chunks` (
	`attempt_id` text NOT NULL,
	`seq` integer NOT NULL,
	`text` text NOT NULL,
	PRIMARY KEY(`attempt_id`, `seq`),
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE cascade
);
