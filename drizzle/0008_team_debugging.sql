CREATE TABLE `agent_daily` (
	`agent` text NOT NULL,
	`day` integer NOT NULL,
	`model` text NOT NULL,
	`outcome` text NOT NULL,
	`cause` text NOT NULL,
	`action` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`duration_ms` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`agent`, `day`, `model`, `outcome`, `cause`, `action`)
);
--> statement-breakpoint
CREATE TABLE `failure_daily` (
	`sig` text NOT NULL,
	`day` integer NOT NULL,
	`level` text NOT NULL,
	`agent` text NOT NULL,
	`model` text NOT NULL,
	`code` text NOT NULL,
	`message` text NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`cost_usd` real DEFAULT 0 NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`sig`, `day`)
);
--> statement-breakpoint
CREATE INDEX `failure_daily_day_idx` ON `failure_daily` (`day`);--> statement-breakpoint
CREATE TABLE `node_daily` (
	`agent` text NOT NULL,
	`day` integer NOT NULL,
	`status` text NOT NULL,
	`nodes` integer DEFAULT 0 NOT NULL,
	`last_started_at` integer,
	PRIMARY KEY(`agent`, `day`, `status`)
);
--> statement-breakpoint
CREATE TABLE `notes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`node_run_id` text,
	`attempt_id` text,
	`author` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_run_id`) REFERENCES `node_runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`attempt_id`) REFERENCES `attempts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notes_run_idx` ON `notes` (`run_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `search_docs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` text NOT NULL,
	`node_run_id` text,
	`attempt_id` text,
	`field` text NOT NULL,
	`body` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `search_docs_run_idx` ON `search_docs` (`run_id`);--> statement-breakpoint
ALTER TABLE `attempts` ADD `failure_sig` text;--> statement-breakpoint
CREATE INDEX `attempts_failure_idx` ON `attempts` (`failure_sig`,`started_at`) WHERE failure_sig IS NOT NULL;--> statement-breakpoint
ALTER TABLE `node_runs` ADD `failure_sig` text;--> statement-breakpoint
CREATE INDEX `node_runs_failure_idx` ON `node_runs` (`failure_sig`,`started_at`) WHERE failure_sig IS NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `kind` text DEFAULT 'flow' NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `replay_of` text REFERENCES runs(id) ON DELETE SET NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `replay_node` text;--> statement-breakpoint
CREATE INDEX `runs_kind_idx` ON `runs` (`kind`,`started_at`);--> statement-breakpoint
CREATE INDEX `runs_replay_of_idx` ON `runs` (`replay_of`);--> statement-breakpoint
-- full-text index of search_docs (hand-written: FTS5 is SQLite's own, drizzle does not describe it)
CREATE VIRTUAL TABLE `search_fts` USING fts5(body, content='search_docs', content_rowid='id');--> statement-breakpoint
CREATE TRIGGER `search_docs_fts_insert` AFTER INSERT ON `search_docs` BEGIN INSERT INTO search_fts(rowid, body) VALUES (new.id, new.body); END;--> statement-breakpoint
CREATE TRIGGER `search_docs_fts_delete` AFTER DELETE ON `search_docs` BEGIN INSERT INTO search_fts(search_fts, rowid, body) VALUES ('delete', old.id, old.body); END;
--> statement-breakpoint
-- Backfill (hand-written): the daily sums and search texts of the runs recorded before this
-- migration, by the rules the run store follows for new runs (db/run-aggregates.ts); every run
-- recorded so far is a flow run. Failure signatures need the normaliser of
-- lib/shared/failure-signature.ts: db/backfill.ts stamps them, and fills failure_daily, at the first open.
INSERT INTO `agent_daily` (`agent`, `day`, `model`, `outcome`, `cause`, `action`, `attempts`, `input_tokens`, `output_tokens`, `cost_usd`, `duration_ms`)
SELECT n.`agent`, (a.`started_at` / 86400000) * 86400000, a.`model`, a.`outcome`, coalesce(a.`cause`, ''), coalesce(a.`action`, 'none'),
  count(*), sum(a.`input_tokens`), sum(a.`output_tokens`), sum(a.`cost_usd`), sum(coalesce(a.`finished_at` - a.`started_at`, 0))
FROM `attempts` a JOIN `node_runs` n ON n.`id` = a.`node_run_id`
WHERE a.`outcome` IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6;--> statement-breakpoint
INSERT INTO `node_daily` (`agent`, `day`, `status`, `nodes`, `last_started_at`)
SELECT n.`agent`, (coalesce(n.`started_at`, n.`finished_at`, r.`started_at`) / 86400000) * 86400000, n.`status`, count(*), max(n.`started_at`)
FROM `node_runs` n JOIN `runs` r ON r.`id` = n.`run_id`
WHERE n.`status` IN ('succeeded', 'failed', 'skipped')
GROUP BY 1, 2, 3;--> statement-breakpoint
-- a run's input and a node's output: JSON text, a string as its text; the first 8,192 characters
INSERT INTO `search_docs` (`run_id`, `node_run_id`, `attempt_id`, `field`, `body`, `at`)
SELECT `id`, NULL, NULL, 'input', substr(CASE WHEN NOT json_valid(`input`) THEN `input` WHEN json_type(`input`) = 'text' THEN json_extract(`input`, '$') ELSE `input` END, 1, 8192), `started_at`
FROM `runs`
WHERE `input` IS NOT NULL AND `input` NOT IN ('null', '""') AND `status` NOT IN ('queued', 'cancelled');--> statement-breakpoint
INSERT INTO `search_docs` (`run_id`, `node_run_id`, `attempt_id`, `field`, `body`, `at`)
SELECT n.`run_id`, n.`id`, NULL, 'output', substr(CASE WHEN NOT json_valid(n.`output`) THEN n.`output` WHEN json_type(n.`output`) = 'text' THEN json_extract(n.`output`, '$') ELSE n.`output` END, 1, 8192),
  coalesce(n.`finished_at`, n.`started_at`, r.`started_at`)
FROM `node_runs` n JOIN `runs` r ON r.`id` = n.`run_id`
WHERE n.`status` = 'succeeded' AND n.`output` IS NOT NULL AND n.`output` NOT IN ('null', '""');--> statement-breakpoint
INSERT INTO `search_docs` (`run_id`, `node_run_id`, `attempt_id`, `field`, `body`, `at`)
SELECT n.`run_id`, n.`id`, NULL, 'error', substr(n.`error_message`, 1, 8192), coalesce(n.`finished_at`, n.`started_at`, r.`started_at`)
FROM `node_runs` n JOIN `runs` r ON r.`id` = n.`run_id`
WHERE n.`status` = 'failed' AND n.`error_message` IS NOT NULL AND n.`error_message` <> '';--> statement-breakpoint
-- a failed attempt's error message, then its validation issues (`pointer message`, one a line) when they fit in 1,024 characters
INSERT INTO `search_docs` (`run_id`, `node_run_id`, `attempt_id`, `field`, `body`, `at`)
SELECT `run_id`, `node_run_id`, `id`, 'error', substr(`body`, 1, 8192), `at` FROM (
  SELECT `run_id`, `node_run_id`, `id`, `at`,
    CASE WHEN `issues` IS NULL OR `issues` = '' OR length(`issues`) > 1024 THEN coalesce(`error_message`, '')
      WHEN coalesce(`error_message`, '') = '' THEN `issues`
      ELSE `error_message` || char(10) || `issues` END AS `body`
  FROM (
    SELECT a.`run_id`, a.`node_run_id`, a.`id`, a.`error_message`, coalesce(a.`finished_at`, a.`started_at`) AS `at`,
      (SELECT group_concat(CASE WHEN coalesce(json_extract(v.`value`, '$.pointer'), '') = '' THEN '(root)' ELSE json_extract(v.`value`, '$.pointer') END || ' ' || coalesce(json_extract(v.`value`, '$.message'), ''), char(10))
        FROM json_each(CASE WHEN NOT json_valid(a.`validation_errors`) THEN '[]' WHEN json_type(a.`validation_errors`) = 'array' THEN a.`validation_errors` ELSE '[]' END) v
        WHERE v.`type` = 'object') AS `issues`
    FROM `attempts` a
    WHERE a.`outcome` IS NOT NULL AND a.`cause` IS NOT NULL
  )
)
WHERE `body` <> '';
