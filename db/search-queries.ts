// Full-text search over the run history (DESIGN: The dashboard, "Short run ids and search"): run
// inputs, node outputs and the (already redacted) failure text, as the run store writes them into
// search_docs, and runs by id prefix. SQLite reads the FTS5 table search_fts; PostgreSQL the stored
// parsed bodies, search_docs.body_tsv, and their GIN index. Hits come newest text first
// (search_docs.id grows as runs are recorded), one per run and field; the snippet is cut from the
// body in JS for the page of hits only.
import { and, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { searchWords, snippet, type SearchWord, type SnippetPart } from '@/lib/shared/search-text';
import { RUN_ID_TAIL_START, runIdPrefix } from '@/lib/shared/short-id';
import { runsByIdOrShortId } from './run-id-queries';
import type { Db, RunStatus } from './types';
import { indexPendingSearchDocs, searchDocsTsv, searchFts } from './search-index';

export type SearchField = 'input' | 'output' | 'error';

export interface SearchHit {
  runId: string;
  flow: string;
  status: RunStatus;
  kind: 'flow' | 'replay' | 'limits';
  startedAt: number;
  /** where the words are: the run's input, a node's output, a failure's text; `id`: the run's id, or its short id, starts with the query */
  field: SearchField | 'id';
  /** the flow node whose output or failure it is; null for the input, an id, or a run's own failure */
  nodeId: string | null;
  /** the attempt whose failure text it is (its seq in the node); null otherwise */
  attemptSeq: number | null;
  /** when the text was written (ms) */
  at: number;
  snippet: SnippetPart[];
}

export interface SearchPage {
  /** the words searched for (empty: nothing was searched) */
  words: SearchWord[];
  hits: SearchHit[];
  /** `before` of the next page (older text), or null when there is none */
  nextBefore: number | null;
}

/** the most hits a page holds (`aqven search --limit`, the search page's size) */
export const SEARCH_PAGE_MAX = 100;

export interface SearchOptions {
  q: string;
  /** hits per page, 1–100 (default 20) */
  limit?: number;
  /** continue below this document id: the `nextBefore` of the previous page */
  before?: number | null;
}

/** matching documents read per round trip, per hit asked for: a run matching in many attempts takes several */
const BATCH_PER_HIT = 4;
/** the most matching documents one page reads before it answers with what it has (and a next page) */
const SCAN_MAX = 2_000;
/**
 * PostgreSQL: the newest documents are tested first (each a stored tsvector, about a microsecond),
 * so a common word or pair is found without the GIN index handing over all its matches; what is
 * older is read from the GIN index, which a rare or absent word needs. Left to itself the planner
 * reads backwards through the primary key for a word it cannot estimate — the whole table for a
 * word no document has.
 */
const PG_RECENT = 2_000;
/** PostgreSQL reads the query text with its own parser, as it read the bodies: bounded */
const PG_QUERY_MAX = 500;
/** runs listed by id prefix on the first page */
const ID_HITS_MAX = 5;

/**
 * One page of hits for `q`, newest text first, one hit per run and field (its newest matching
 * text: a run whose every attempt failed alike shows once); a query of hex digits and dashes (at
 * least 4) also lists, first, the runs whose id, or short id, starts with it. An empty query searches nothing.
 */
export async function searchHistory(db: Db, opts: SearchOptions): Promise<SearchPage> {
  const words = searchWords(opts.q);
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 20), 1), SEARCH_PAGE_MAX);
  const before = opts.before ?? null;
  const prefix = before === null ? runIdPrefix(opts.q) : null;
  if (!words.length && !prefix) return { words, hits: [], nextBefore: null };
  const idHits = prefix ? await idPrefixHits(db, prefix) : [];
  if (!words.length) return { words, hits: idHits, nextBefore: null };
  // SQLite indexes the newest docs in batches behind the commits (db/search-index.ts): a search sees them all
  if (db.dialect === 'sqlite') indexPendingSearchDocs(db);
  const { picked, nextBefore } = await pickDocs(db, words, opts.q, limit, before);
  const textHits = await hitsOf(db, picked, words);
  return { words, hits: [...idHits, ...textHits], nextBefore };
}

interface DocRef {
  id: number;
  runId: string;
  field: SearchField;
}

/** The documents of one page: the newest of each (run, field) until `limit` are kept. */
class Picker {
  readonly picked: DocRef[] = [];
  private readonly seen = new Set<string>();
  /** the lowest document id read so far: where the next read starts */
  cursor: number | null;
  scanned = 0;
  constructor(
    private readonly limit: number,
    before: number | null,
  ) {
    this.cursor = before;
  }
  /**
   * Reads `rows` (newest first); true once the page is full. A full page still passes over the
   * older text of its own hits that follows in `rows`, so the next page does not show them again.
   */
  take(rows: { id: number | string; runId: string; field: SearchField }[]): boolean {
    for (const r of rows) {
      const key = `${r.field}\u0000${r.runId}`;
      const seen = this.seen.has(key);
      if (!seen && this.picked.length === this.limit) return true;
      this.cursor = Number(r.id);
      this.scanned++;
      if (seen) continue;
      this.seen.add(key);
      this.picked.push({ id: this.cursor, runId: r.runId, field: r.field });
    }
    return this.picked.length === this.limit;
  }
}

/**
 * The newest matching document of each (run, field), `limit` of them, read newest first in
 * batches; `nextBefore` is where the next page starts (null: no older match), also when a page
 * stops after SCAN_MAX documents with fewer hits.
 */
async function pickDocs(db: Db, words: SearchWord[], q: string, limit: number, before: number | null) {
  const d = db.t.searchDocs;
  const batch = Math.max(50, limit * BATCH_PER_HIT);
  const p = new Picker(limit, before);
  const full = () => ({ picked: p.picked, nextBefore: p.cursor });
  if (db.dialect === 'pg') {
    const recent = db.q
      .select({ id: d.id, runId: d.runId, field: d.field, tsv: sql`${searchDocsTsv.bodyTsv}`.as('tsv') })
      .from(d)
      .where(before === null ? undefined : lt(d.id, before))
      .orderBy(desc(d.id))
      .limit(PG_RECENT)
      .as('recent');
    const window = await db.q
      .select({ id: recent.id, runId: recent.runId, field: recent.field })
      .from(recent)
      .where(pgMatch(sql`${recent.tsv}`, words, q))
      .orderBy(desc(recent.id));
    if (p.take(window)) return full();
    // the newest PG_RECENT were tested: what is older is read from the GIN index
    const [oldest] = await db.q
      .select({ id: d.id })
      .from(d)
      .where(before === null ? undefined : lt(d.id, before))
      .orderBy(desc(d.id))
      .offset(PG_RECENT - 1)
      .limit(1);
    if (!oldest) return { picked: p.picked, nextBefore: null };
    p.cursor = Number(oldest.id);
  }
  for (;;) {
    const rows = await matchingDocs(db, words, q, { before: p.cursor, limit: batch });
    if (p.take(rows)) return full();
    if (rows.length < batch) return { picked: p.picked, nextBefore: null };
    if (p.scanned >= SCAN_MAX) return full();
  }
}

/**
 * The newest `limit` documents matching the words of `q` below `before`, newest first, read
 * through the dialect's full-text index (a query builder: the tests read its plan).
 */
export function matchingDocs(db: Db, words: SearchWord[], q: string, page: { before: number | null; limit: number }) {
  const d = db.t.searchDocs;
  const query = db.q.select({ id: d.id, runId: d.runId, field: d.field }).from(d);
  if (db.dialect === 'sqlite') {
    // each word a quoted string, so no text of the user's is FTS5 syntax; `"word"*` is a prefix.
    // FTS5 reads its matches newest first and stops at the limit, however common the word
    const expr = words.map((w) => `"${w.text}"${w.prefix ? '*' : ''}`).join(' ');
    const match = sql`${searchFts.table} match ${expr}`;
    const ids = db.q
      .select({ id: searchFts.rowid })
      .from(searchFts)
      .where(page.before === null ? match : and(match, lt(searchFts.rowid, page.before)))
      .orderBy(desc(searchFts.rowid))
      .limit(page.limit);
    return query.where(inArray(d.id, ids)).orderBy(desc(d.id)).limit(page.limit);
  }
  const match = pgMatch(sql`${searchDocsTsv.bodyTsv}`, words, q);
  return (
    query
      .where(page.before === null ? match : and(match, lt(d.id, page.before)))
      // `+ 0` keeps the planner off a backward scan of the primary key (PG_RECENT did that part): the GIN index, then a top-N sort
      .orderBy(sql`${d.id} + 0 desc`)
      .limit(page.limit)
  );
}

/**
 * PostgreSQL: a stored parsed body (`tsv`: search_docs.body_tsv) matches the user's text read by the
 * same parser (hosts, emails, hyphenated words), each `word*` a prefix.
 */
function pgMatch(tsv: SQL, words: SearchWord[], q: string): SQL {
  const plain = q.slice(0, PG_QUERY_MAX).replace(/[\p{L}\p{N}\p{Co}]+\*/gu, ' ');
  const prefixes = words.filter((w) => w.prefix).map((w) => `${w.text}:*`);
  const parts: SQL[] = [];
  if (searchWords(plain).length) parts.push(sql`plainto_tsquery('simple', ${plain})`);
  if (prefixes.length) parts.push(sql`to_tsquery('simple', ${prefixes.join(' & ')})`);
  if (!parts.length) return sql`false`;
  return sql`${tsv} @@ (${sql.join(parts, sql` && `)})`;
}

/** The hits of the documents picked, in their order: each with its run, node, attempt and snippet. */
async function hitsOf(db: Db, picked: DocRef[], words: SearchWord[]): Promise<SearchHit[]> {
  if (!picked.length) return [];
  const { attempts, nodeRuns, runs, searchDocs: d } = db.t;
  const rows = await db.q
    .select({
      id: d.id,
      field: d.field,
      body: d.body,
      at: d.at,
      runId: runs.id,
      flow: runs.flow,
      status: runs.status,
      kind: runs.kind,
      startedAt: runs.startedAt,
      nodeId: nodeRuns.nodeId,
      attemptSeq: attempts.seq,
    })
    .from(d)
    .innerJoin(runs, eq(runs.id, d.runId))
    .leftJoin(nodeRuns, eq(nodeRuns.id, d.nodeRunId))
    .leftJoin(attempts, eq(attempts.id, d.attemptId))
    .where(
      inArray(
        d.id,
        picked.map((p) => p.id),
      ),
    );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return picked.flatMap((p) => {
    const r = byId.get(p.id);
    if (!r) return []; // its run was deleted between the two reads
    return [
      {
        runId: r.runId,
        flow: r.flow,
        status: r.status,
        kind: r.kind,
        startedAt: Number(r.startedAt),
        field: r.field,
        nodeId: r.nodeId ?? null,
        attemptSeq: r.attemptSeq ?? null,
        at: Number(r.at),
        snippet: snippet(r.body, words),
      },
    ];
  });
}

async function idPrefixHits(db: Db, prefix: string): Promise<SearchHit[]> {
  const matches = await runsByIdOrShortId(db, prefix, ID_HITS_MAX);
  return matches.map((m) => {
    // the id starts with the query, or its last group does (the short id)
    const at = m.id.startsWith(prefix) ? 0 : RUN_ID_TAIL_START;
    return {
      runId: m.id,
      flow: m.flow,
      status: m.status,
      kind: m.kind,
      startedAt: m.startedAt,
      field: 'id' as const,
      nodeId: null,
      attemptSeq: null,
      at: m.startedAt,
      snippet: [
        { text: m.id.slice(0, at), hit: false },
        { text: m.id.slice(at, at + prefix.length), hit: true },
        { text: m.id.slice(at + prefix.length), hit: false },
      ].filter((p) => p.text),
    };
  });
}
