-- Run ids are time-ordered (UUID v7): the short id is the start of the id's last group, its random
-- part (lib/shared/short-id.ts), looked up by a range on this expression (db/run-id-queries.ts).
CREATE INDEX "runs_id_tail_idx" ON "runs" USING btree (substr("id", 25));
