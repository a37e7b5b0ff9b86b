// SQLite's full-text index of search_docs, fed in batches off the recording path (DESIGN: Storage,
// "SQLite's full-text index, fed in batches"). The run store writes search_docs rows in its commits;
// indexing them one by one there cost each recorded call a third of the store's time (every FTS5
// insert rewrites index pages). Here the rows written since the last batch go into search_fts in one
// transaction: a second after the commit that wrote them, before every search, and when the store
// is flushed. The settings row FTS_WATERMARK is the highest id indexed; the delete trigger (migration
// 0010_search_write_behind) takes out of the index only rows at or below it, since an FTS5 'delete'
// of a row the index never held would corrupt it. PostgreSQL needs none of this: its parsed bodies are
// a stored column of search_docs, GIN-indexed (searchDocsTsv below).
import { eq, gt, sql } from 'drizzle-orm';
import { customType, pgTable } from 'drizzle-orm/pg-core';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { SqliteDb } from './types';

export const FTS_WATERMARK = 'fts:indexed_to';

/**
 * The FTS5 table itself (hand-written in the migration, so drizzle's schema does not describe it),
 * by its hidden columns: the rowid (a search_docs id), the one named after the table (MATCH is
 * written against it), and the indexed text.
 */
export const searchFts = sqliteTable('search_fts', {
  rowid: integer('rowid').notNull(),
  table: text('search_fts'),
  body: text('body'),
});

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * PostgreSQL's parsed bodies: search_docs.body_tsv, `to_tsvector('simple', body)` stored when the
 * row is written (a generated column, hand-written in migration pg/0006_search_tsvector, so
 * drizzle's schema does not describe it), with the GIN index search_docs_tsv_idx.
 */
export const searchDocsTsv = pgTable('search_docs', {
  bodyTsv: tsvector('body_tsv'),
});

const prepared = new WeakMap<SqliteDb, () => number>();

function prepare(db: SqliteDb): () => number {
  const { searchDocs, settings } = db.t;
  const watermark = db.q.select({ value: settings.value }).from(settings).where(eq(settings.key, FTS_WATERMARK)).prepare();
  const top = db.q
    .select({ id: sql<number | null>`max(${searchDocs.id})` })
    .from(searchDocs)
    .prepare();
  const insert = db.q
    .insert(searchFts)
    .select(
      db.q
        .select({ rowid: searchDocs.id, table: sql<null>`null`.as('search_fts'), body: searchDocs.body })
        .from(searchDocs)
        .where(gt(searchDocs.id, sql.placeholder('from'))),
    )
    .prepare();
  const save = db.q
    .insert(settings)
    .values({ key: FTS_WATERMARK, value: sql.placeholder('to') })
    .onConflictDoUpdate({ target: settings.key, set: { value: sql`excluded.value` } })
    .prepare();
  const batch = db.$client.transaction((): number => {
    const from = Number(watermark.get()?.value ?? 0);
    const to = top.get()?.id ?? 0;
    if (to <= from) return 0;
    const { changes } = insert.run({ from });
    save.run({ to: String(to) });
    return changes;
  });
  return () => batch.immediate();
}

/**
 * Indexes the search_docs rows written since the last call, in one transaction; returns how many.
 * A database this process may only read is left as it is (0): its writer indexes it.
 */
export function indexPendingSearchDocs(db: SqliteDb): number {
  let run = prepared.get(db);
  try {
    if (!run) prepared.set(db, (run = prepare(db)));
    return run();
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? (err as { cause?: { code?: unknown } }).cause?.code ?? '');
    if (code.startsWith('SQLITE_READONLY')) return 0;
    throw err;
  }
}
