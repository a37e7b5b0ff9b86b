-- Run ids are time-ordered (UUID v7): the short id is the start of the id's last group, its random
-- part (lib/shared/short-id.ts), looked up by a range on this expression (db/run-id-queries.ts).
-- Written by hand: drizzle-kit quotes an expression index on SQLite as if it were columns.
CREATE INDEX `runs_id_tail_idx` ON `runs` (substr(`id`, 25));
