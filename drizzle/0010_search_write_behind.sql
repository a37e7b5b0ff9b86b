-- The full-text index is fed in batches, off the recording path (db/search-index.ts): the insert
-- trigger goes; the settings row `fts:indexed_to` is the highest search_docs id already indexed.
-- A deleted row is taken out of the index only when it was put in: an FTS5 'delete' of a row the
-- index never held would corrupt it.
DROP TRIGGER IF EXISTS `search_docs_fts_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `search_docs_fts_delete`;--> statement-breakpoint
INSERT INTO `settings` (`key`, `value`) VALUES ('fts:indexed_to', CAST(coalesce((SELECT max(`id`) FROM `search_docs`), 0) AS TEXT)) ON CONFLICT(`key`) DO UPDATE SET `value` = excluded.`value`;--> statement-breakpoint
CREATE TRIGGER `search_docs_fts_delete` AFTER DELETE ON `search_docs` WHEN old.id <= coalesce((SELECT CAST(`value` AS INTEGER) FROM `settings` WHERE `key` = 'fts:indexed_to'), 0) BEGIN INSERT INTO search_fts(search_fts, rowid, body) VALUES ('delete', old.id, old.body); END;
