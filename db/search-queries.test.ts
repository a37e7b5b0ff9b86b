// Searching the run history and naming runs by id prefix, on both dialects: words of a run's
// input, a node's output and a failure's (redacted) text find the run; what redaction replaced is
// not found; no text of the user's breaks the query; a prefix names one run or lists them all.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '@/lib/flow/run-record';
import { searchWords } from '@/lib/shared/search-text';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../test/helpers/showcase';
import { shortRunId } from '@/lib/shared/short-id';
import { prefixRange, resolveRunId, runsByIdPrefix, runsByShortIdPrefix } from './run-id-queries';
import { matchingDocs, searchHistory, type SearchHit } from './search-queries';
import type { Db } from './types';

const T0 = Date.UTC(2026, 0, 1);
const text = (h: SearchHit) => h.snippet.map((p) => (p.hit ? `[${p.text}]` : p.text)).join('');

describe.each(DIALECTS)('searching runs recorded over the simulator, on %s', (dialect) => {
  let w: World<Db>;
  let answered: RunRecord;
  let failed: RunRecord;
  beforeAll(async () => {
    w = await worldOn(dialect, {});
    w.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok', text: 'Dear customer, the narwhal refund is on its way.' }] });
    answered = await w.run('triage', { ticket: 'Refund for invoice pelican-7731 please' });
    // the provider's error quotes an address: stored (and so searchable) only as <EMAIL>
    const message = 'mailbox zorro.quill@example.org is over quota';
    w.sim.loadScripts({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [
        { kind: 'provider_error', message },
        { kind: 'provider_error', message },
      ],
    });
    failed = await w.run('triage', { ticket: 'My walrus subscription renewed twice' });
  }, 120_000);
  afterAll(() => w?.close());

  it('recorded the runs as scripted', () => {
    expect([answered.status, failed.status]).toEqual(['succeeded', 'failed']);
  });

  it('finds a run by a word of its input, with the word marked in the snippet', async () => {
    const { hits } = await searchHistory(w.db, { q: 'pelican' });
    expect(hits.map((h) => [h.runId, h.field, h.nodeId])).toEqual([[answered.id, 'input', null]]);
    expect(hits[0]).toMatchObject({ flow: 'triage', status: 'succeeded', kind: 'flow', startedAt: Date.parse(answered.startedAt) });
    expect(text(hits[0]!)).toContain('[pelican]');
  });

  it("finds a run by a word of a node's output, naming the node", async () => {
    const { hits } = await searchHistory(w.db, { q: 'Narwhal' });
    expect(hits.map((h) => [h.runId, h.field, h.nodeId])).toEqual([[answered.id, 'output', 'draft']]);
    expect(text(hits[0]!)).toBe('Dear customer, the [narwhal] refund is on its way.');
  });

  it('finds a failure by its text once per run, though two attempts and the node failed alike', async () => {
    const { hits } = await searchHistory(w.db, { q: 'over quota' });
    expect(hits.map((h) => [h.runId, h.field, h.nodeId])).toEqual([[failed.id, 'error', 'draft']]);
    expect(text(hits[0]!)).toContain('is [over] [quota]');
  });

  it('never finds what redaction replaced: the address is not in the stored text', async () => {
    for (const q of ['zorro', 'quill', 'example.org', 'zorro.quill@example.org']) expect((await searchHistory(w.db, { q })).hits, q).toEqual([]);
    // the placeholder is stored in its place
    const { hits } = await searchHistory(w.db, { q: 'mailbox' });
    expect(text(hits[0]!)).toContain('<EMAIL>');
  });

  it('made time-ordered run ids (UUID v7), each later one sorting after the one before', () => {
    for (const id of [answered.id, failed.id]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(answered.id < failed.id).toBe(true);
  });

  it('names a run by its short id, the start of its random last group, and by its id', async () => {
    expect(shortRunId(failed.id)).toBe(failed.id.slice(24, 32));
    expect(await resolveRunId(w.db, shortRunId(failed.id))).toEqual({ kind: 'found', id: failed.id });
    expect(await resolveRunId(w.db, shortRunId(answered.id).toUpperCase())).toEqual({ kind: 'found', id: answered.id });
    expect(await resolveRunId(w.db, failed.id)).toEqual({ kind: 'found', id: failed.id });
  });
});

/** A run, as far as search and its id need one. */
async function addRun(db: Db, id: string, startedAt: number, over: { flow?: string; status?: 'succeeded' | 'failed'; kind?: 'flow' | 'replay' } = {}) {
  await db.q.insert(db.t.runs).values({ id, project: 'p', flow: over.flow ?? 'triage', status: over.status ?? 'succeeded', input: null, startedAt, kind: over.kind ?? 'flow' });
}

async function addDoc(db: Db, runId: string, field: 'input' | 'output' | 'error', body: string, at: number) {
  await db.q.insert(db.t.searchDocs).values({ runId, nodeRunId: null, attemptId: null, field, body, at });
}

describe.each(DIALECTS)('search and run ids on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (opened) => (db = opened.db));
  const A = 'abcd1234-0000-4000-8000-a11ce0000001';
  const B = 'abcd9999-0000-4000-8000-b0b000000002';
  const C = 'ffff0000-0000-4000-8000-c0c000000003';
  beforeEach(async () => {
    await db.q.delete(db.t.runs); // their documents go with them
    await addRun(db, A, T0 + 1, { flow: 'triage' });
    await addRun(db, B, T0 + 2, { flow: 'long-answer', status: 'failed', kind: 'replay' });
    await addRun(db, C, T0 + 3);
    await addDoc(db, A, 'input', '{"ticket":"the store near the river, cats and dogs"}', T0 + 1);
    await addDoc(db, A, 'error', 'upstream overloaded (refund service)', T0 + 10);
    await addDoc(db, A, 'error', 'upstream overloaded again', T0 + 11);
    await addDoc(db, B, 'input', '{"question":"Is a refund possible?"}', T0 + 2);
    await addDoc(db, B, 'output', 'Refunds take five days; upstream says so.', T0 + 20);
    await addDoc(db, C, 'error', 'upstream overloaded (third run)', T0 + 30);
  });

  it('answers the newest text first, one hit per run and field, and pages to older text', async () => {
    const all = await searchHistory(db, { q: 'upstream' });
    expect(all.hits.map((h) => [h.runId, h.field])).toEqual([
      [C, 'error'],
      [B, 'output'],
      [A, 'error'],
    ]);
    expect(all.nextBefore).toBeNull();
    const first = await searchHistory(db, { q: 'upstream', limit: 2 });
    expect(first.hits.map((h) => h.runId)).toEqual([C, B]);
    expect(first.nextBefore).not.toBeNull();
    const second = await searchHistory(db, { q: 'upstream', limit: 2, before: first.nextBefore });
    expect(second.hits.map((h) => [h.runId, h.field])).toEqual([[A, 'error']]);
    expect(second.hits[0]!.snippet.map((p) => p.text).join('')).toBe('upstream overloaded again');
    expect(second.nextBefore).toBeNull();
    expect(all.hits[1]).toMatchObject({ flow: 'long-answer', status: 'failed', kind: 'replay' });
  });

  it('finds older text past a long stretch of newer text that does not match', async () => {
    const filler = Array.from({ length: 450 }, (_, i) => ({ runId: C, nodeRunId: null, attemptId: null, field: 'output' as const, body: `nothing to see ${i}`, at: T0 + 40 + i }));
    await db.q.insert(db.t.searchDocs).values(filler);
    expect((await searchHistory(db, { q: 'refund*' })).hits.map((h) => [h.runId, h.field])).toEqual([
      [B, 'output'],
      [B, 'input'],
      [A, 'error'],
    ]);
    const first = await searchHistory(db, { q: 'overloaded', limit: 1 });
    expect(first.hits.map((h) => [h.runId, h.field])).toEqual([[C, 'error']]);
    const second = await searchHistory(db, { q: 'overloaded', limit: 1, before: first.nextBefore });
    expect(second.hits.map((h) => [h.runId, h.field])).toEqual([[A, 'error']]);
    expect((await searchHistory(db, { q: 'overloaded', before: second.nextBefore })).hits).toEqual([]);
    // 450 matches in one run's outputs: one hit, its newest text
    const common = await searchHistory(db, { q: 'nothing see', limit: 3 });
    expect(common.hits.map((h) => [h.runId, h.field, h.snippet.map((p) => p.text).join('')])).toEqual([[C, 'output', 'nothing to see 449']]);
    expect(common.nextBefore).toBeNull();
  });

  it('needs every word (AND), folds case, and takes `word*` as a prefix', async () => {
    expect((await searchHistory(db, { q: 'UPSTREAM refund' })).hits.map((h) => h.runId)).toEqual([A]);
    // newest text first: B's input was written after A's first failure
    expect((await searchHistory(db, { q: 'refund' })).hits.map((h) => [h.runId, h.field])).toEqual([
      [B, 'input'],
      [A, 'error'],
    ]);
    expect((await searchHistory(db, { q: 'refund*' })).hits.map((h) => [h.runId, h.field])).toEqual([
      [B, 'output'],
      [B, 'input'],
      [A, 'error'],
    ]);
    expect((await searchHistory(db, { q: 'refu' })).hits).toEqual([]);
    const marked = (await searchHistory(db, { q: 'refund*' })).hits.find((h) => h.field === 'output')!;
    expect(marked.snippet).toEqual([
      { text: 'Refunds', hit: true },
      { text: ' take five days; upstream says so.', hit: false },
    ]);
  });

  it("reads the user's text as words: quotes, operators, NEAR and stray stars never break the query", async () => {
    const queries = [
      '"',
      "'",
      '"unclosed',
      'cats AND',
      'OR',
      'NOT river',
      'NEAR(cats dogs)',
      'near',
      '*',
      '**',
      'c*',
      '^cats',
      'ticket:cats',
      '{body}:cats',
      'cats -dogs',
      '(cats',
      'cats)',
      'cats & dogs | !river',
      "'; drop table runs; --",
      'cats <-> dogs',
      'a:*',
      '\\',
      '\u0000',
      'ü*',
      'x'.repeat(5000),
    ];
    for (const q of queries) await expect(searchHistory(db, { q }), q).resolves.toHaveProperty('hits');
    // the words are searched for as words: "AND" and "NEAR" are words of the text like any other
    expect((await searchHistory(db, { q: 'cats AND dogs' })).hits.map((h) => h.runId)).toEqual([A]);
    expect((await searchHistory(db, { q: 'NEAR(river' })).hits.map((h) => h.runId)).toEqual([A]);
    expect((await searchHistory(db, { q: '"cats" OR birds' })).hits).toEqual([]);
    // still on the table the injection named
    expect(await runsByIdPrefix(db, 'abcd', 10)).toHaveLength(2);
  });

  it('searches nothing for an empty or punctuation-only query', async () => {
    for (const q of ['', '   ', '\n\t', '"" * -']) expect(await searchHistory(db, { q })).toEqual({ words: [], hits: [], nextBefore: null });
  });

  it('lists the runs whose id starts with a hex query, before the text hits', async () => {
    const { hits } = await searchHistory(db, { q: 'abcd' });
    expect(hits.map((h) => [h.runId, h.field])).toEqual([
      [B, 'id'],
      [A, 'id'],
    ]);
    expect(hits[0]!.snippet).toEqual([
      { text: 'abcd', hit: true },
      { text: B.slice(4), hit: false },
    ]);
    expect((await searchHistory(db, { q: 'ABCD1234' })).hits.map((h) => [h.runId, h.field])).toEqual([[A, 'id']]);
    expect((await searchHistory(db, { q: A })).hits.map((h) => [h.runId, h.field])).toEqual([[A, 'id']]);
    // three characters are not looked up; nor are ids on a later page
    expect((await searchHistory(db, { q: 'abc' })).hits).toEqual([]);
    expect((await searchHistory(db, { q: 'abcd', before: 1_000_000 })).hits).toEqual([]);
  });

  it('resolves an id, a unique prefix, and lists the runs an ambiguous prefix names', async () => {
    expect(await resolveRunId(db, A)).toEqual({ kind: 'found', id: A });
    expect(await resolveRunId(db, 'abcd1234')).toEqual({ kind: 'found', id: A });
    expect(await resolveRunId(db, 'ABCD1234-0000')).toEqual({ kind: 'found', id: A });
    expect(await resolveRunId(db, 'ffff')).toEqual({ kind: 'found', id: C });
    expect(await resolveRunId(db, 'abcd')).toEqual({
      kind: 'ambiguous',
      more: false,
      matches: [
        { id: B, flow: 'long-answer', status: 'failed', kind: 'replay', startedAt: T0 + 2 },
        { id: A, flow: 'triage', status: 'succeeded', kind: 'flow', startedAt: T0 + 1 },
      ],
    });
    for (const none of ['abc', 'abcd12345', 'abcd1234-1', 'zzzz', '', 'abcd%', 'abcd_']) expect(await resolveRunId(db, none), none).toEqual({ kind: 'none' });
  });

  it("names a run by its short id, the start of its id's last group; runs sharing it are listed, never one picked", async () => {
    // two time-ordered (v7) runs made in the same minute: their ids share the first 8 characters, and here the short id's too
    const D = '019ad3f2-9c1e-7b7d-8e8f-5eed1e55cafe';
    const E = '019ad3f2-9c1e-7b7d-8e8f-5eed1e55beef';
    await addRun(db, D, T0 + 4);
    await addRun(db, E, T0 + 5, { flow: 'long-answer' });
    expect(await resolveRunId(db, '5eed1e55cafe')).toEqual({ kind: 'found', id: D });
    expect(await resolveRunId(db, '5EED1E55BEEF')).toEqual({ kind: 'found', id: E });
    const shared = [
      { id: E, flow: 'long-answer', status: 'succeeded', kind: 'flow', startedAt: T0 + 5 },
      { id: D, flow: 'triage', status: 'succeeded', kind: 'flow', startedAt: T0 + 4 },
    ];
    expect(await resolveRunId(db, '5eed1e55')).toEqual({ kind: 'ambiguous', more: false, matches: shared });
    expect(await resolveRunId(db, '019ad3f2')).toEqual({ kind: 'ambiguous', more: false, matches: shared });
    // past the last group's 12 digits, or with a dash, it is a prefix of the whole id only
    for (const none of ['5eed1e55cafe0', '5eed-1e55', '8e8f-5eed']) expect(await resolveRunId(db, none), none).toEqual({ kind: 'none' });
    // the search lists them too, the short id marked where it is
    const { hits } = await searchHistory(db, { q: '5eed1e55' });
    expect(hits.map((h) => h.runId)).toEqual([E, D]);
    expect(hits[0]!.snippet).toEqual([
      { text: E.slice(0, 24), hit: false },
      { text: '5eed1e55', hit: true },
      { text: 'beef', hit: false },
    ]);
  });

  it('names a run recorded with a random (v4) id by its first 8 characters, as it was shown, and by its short id now', async () => {
    expect(shortRunId(A)).toBe('a11ce000');
    expect(await resolveRunId(db, 'abcd1234')).toEqual({ kind: 'found', id: A });
    expect(await resolveRunId(db, 'a11ce000')).toEqual({ kind: 'found', id: A });
    expect(await resolveRunId(db, 'b0b0')).toEqual({ kind: 'found', id: B });
    // a query that starts one run's id and another's last group names both
    const G = 'a11ce000-0000-4000-8000-000000000007';
    await addRun(db, G, T0 + 7);
    const r = await resolveRunId(db, 'a11ce000');
    expect(r.kind === 'ambiguous' && r.matches.map((m) => m.id)).toEqual([G, A]);
    // an id not shaped as a UUID is shown, and found, by its start only, whatever its length
    await addRun(db, 'run-made-by-a-test-name-a11ce000zzzz', T0 + 8);
    const again = await resolveRunId(db, 'a11ce000');
    expect(again.kind === 'ambiguous' && again.matches.map((m) => m.id)).toEqual([G, A]);
  });

  it('lists at most 10 runs of an ambiguous prefix and says there are more', async () => {
    for (let i = 0; i < 12; i++) await addRun(db, `beef${String(i).padStart(4, '0')}-0000-4000-8000-000000000000`, T0 + 100 + i);
    const r = await resolveRunId(db, 'beef');
    expect(r.kind === 'ambiguous' && [r.matches.length, r.more, r.matches[0]!.id.slice(0, 8)]).toEqual([10, true, 'beef0011']);
  });
});

describe('the id range of a prefix', () => {
  it('is the hex digits before the first dash, up to the same digits plus one', () => {
    expect(prefixRange('abcd1234')).toEqual({ lo: 'abcd1234', hi: 'abcd1235' });
    expect(prefixRange('abc9')).toEqual({ lo: 'abc9', hi: 'abca' });
    expect(prefixRange('abcf')).toEqual({ lo: 'abcf', hi: 'abd' });
    expect(prefixRange('abcd1234-56')).toEqual({ lo: 'abcd1234', hi: 'abcd1235' });
    expect(prefixRange('ffff')).toEqual({ lo: 'ffff', hi: null });
  });
});

describe('the plan on SQLite', () => {
  let db: Db;
  withTestDb('sqlite', (opened) => (db = opened.db));

  it('reads FTS5 newest first below the cursor, and the documents and runs by their keys', async () => {
    if (db.dialect !== 'sqlite') throw new Error('sqlite only');
    const { sql: text, params } = matchingDocs(db, searchWords('refund up*'), 'refund up*', { before: 100, limit: 50 }).toSQL();
    const plan = (db.$client.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[]).map((r) => r.detail);
    expect(plan).toContain('SEARCH search_docs USING INTEGER PRIMARY KEY (rowid=?)');
    expect(plan.some((d) => /^SCAN search_fts VIRTUAL TABLE INDEX \d+:M\d*</.test(d))).toBe(true);
    // FTS5 gives the rowids in order: nothing sorts the matches
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE/);
    const byId = runsByIdPrefix(db, 'abcd12', 11).toSQL();
    const range = db.$client.prepare(`EXPLAIN QUERY PLAN ${byId.sql}`).all(...byId.params) as { detail: string }[];
    expect(range.map((r) => r.detail).join()).toMatch(/USING INDEX sqlite_autoindex_runs_1 \(id>\? AND id<\?\)/);
  });

  it("reads a short id as a range of the index on the ids' last groups", () => {
    if (db.dialect !== 'sqlite') throw new Error('sqlite only');
    for (const p of ['5eed', '5eed1e55', 'ffff']) {
      const q = runsByShortIdPrefix(db, p, 11).toSQL();
      const plan = (db.$client.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[]).map((r) => r.detail).join();
      expect(plan, p).toMatch(/SEARCH runs USING INDEX runs_id_tail_idx \(<expr>>\?/);
    }
  });
});

describe('the id range under PostgreSQL linguistic collations', () => {
  let db: Db;
  withTestDb('pg', (opened) => (db = opened.db));

  it('holds every id starting with the prefix, whatever the collation of the key', async () => {
    if (db.dialect !== 'pg') throw new Error('pg only');
    // ICU's default (dashes count), and a "shifted" one that sets punctuation aside as glibc's en_US does
    await db.pool.query(`CREATE COLLATION IF NOT EXISTS en_shifted (provider = icu, locale = 'en-US-u-ka-shifted')`);
    const ids = ['abcd1234-0000-4000-8000-000000000001', 'abcd-1234', 'abcd', 'abcd-', 'abcc', 'abce', 'ABCD1234', 'abcd12', 'abcdffff-0000', 'abcf0000-1', 'abd', 'ab-cd1234'];
    for (const collation of ['"C"', '"en-US-x-icu"', 'en_shifted', '"und-x-icu"']) {
      for (const p of ['abcd', 'abcd1234', 'abcd-', 'abcd-1', 'abcf', 'abcd12']) {
        const { lo, hi } = prefixRange(p);
        const { rows } = await db.pool.query<{ id: string }>(
          `SELECT id FROM unnest($1::text[]) AS t(id) WHERE id COLLATE ${collation} >= $2 AND ($3::text IS NULL OR id COLLATE ${collation} < $3)`,
          [ids, lo, hi],
        );
        const inRange = new Set(rows.map((r) => r.id));
        for (const id of ids.filter((i) => i.startsWith(p))) expect(inRange.has(id), `${id} in range of ${p} under ${collation}`).toBe(true);
      }
    }
    // a short id past `ffff…` is looked up below `g` (runsByShortIdPrefix): every last group is
    const tails = ['ffffffffffff', 'ffff0000a0b1', '0000abcd1234', '9fffffffffff'];
    for (const collation of ['"C"', '"en-US-x-icu"', 'en_shifted', '"und-x-icu"']) {
      const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM unnest($1::text[]) AS t(id) WHERE id COLLATE ${collation} < 'g'`, [tails]);
      expect(rows.map((r) => r.id).sort(), collation).toEqual([...tails].sort());
    }
  });

  it('tests the stored parsed bodies, never parsing one, and the GIN index can serve words and prefixes', async () => {
    if (db.dialect !== 'pg') throw new Error('pg only');
    const client = await db.pool.connect();
    try {
      for (const q of ['refund', 'refund upstream*', 'walrus-7 a.b@c.de']) {
        const plan = async (before: number | null) => {
          const { sql: text, params } = matchingDocs(db, searchWords(q), q, { before, limit: 50 }).toSQL();
          return (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
        };
        // whatever the planner picks, it tests body_tsv, and no body is parsed
        expect(await plan(1000), q).toMatch(/body_tsv @@/);
        expect(await plan(1000), q).not.toMatch(/to_tsvector/);
        // with the scans it could pick instead turned off, the GIN index serves the words
        await client.query('SET enable_seqscan = off');
        await client.query('SET enable_indexscan = off');
        expect(await plan(null), q).toMatch(/Bitmap Index Scan on search_docs_tsv_idx/);
        await client.query('RESET enable_seqscan');
        await client.query('RESET enable_indexscan');
      }
    } finally {
      await client.query('RESET ALL');
      client.release();
    }
  });

  it('reads the primary key as a range', async () => {
    if (db.dialect !== 'pg') throw new Error('pg only');
    const client = await db.pool.connect();
    try {
      // the table is empty: forbid the scan a planner would pick for it, to see whether the index can serve the range
      await client.query('SET enable_seqscan = off');
      const byId = runsByIdPrefix(db, 'abcd1234', 11).toSQL();
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${byId.sql}`, byId.params);
      expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using runs_pkey/);
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  });

  it("reads a short id as a range of the index on the ids' last groups", async () => {
    if (db.dialect !== 'pg') throw new Error('pg only');
    const client = await db.pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      for (const p of ['5eed', '5eed1e55', 'ffff']) {
        const q = runsByShortIdPrefix(db, p, 11).toSQL();
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.sql}`, q.params);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, p).toMatch(/(Bitmap Index Scan on|Index Scan using) runs_id_tail_idx/);
        expect(plan, p).toMatch(/Index Cond: \(\(substr\(id, 25\) >= '[0-9a-f]+'::text\) AND \(substr\(id, 25\) < '[0-9a-g]+'::text\)\)/);
      }
    } finally {
      await client.query('RESET enable_seqscan');
      client.release();
    }
  });
});
