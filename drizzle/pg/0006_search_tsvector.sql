-- search_docs.body_tsv: each body parsed once, when it is written, and stored (hand-written:
-- drizzle's schema does not describe it; db/search-queries.ts names it). The GIN index moves from
-- the expression to the column. A search then tests a stored tsvector instead of parsing a body:
-- the newest 2,000 documents first, then the GIN index (DESIGN: "Search over the run history").
-- Adding the column rewrites the table once: a few tens of seconds per million documents.
ALTER TABLE "search_docs" ADD COLUMN "body_tsv" tsvector GENERATED ALWAYS AS (to_tsvector('simple', "body")) STORED;--> statement-breakpoint
DROP INDEX IF EXISTS "search_docs_fts_idx";--> statement-breakpoint
CREATE INDEX "search_docs_tsv_idx" ON "search_docs" USING gin ("body_tsv");
