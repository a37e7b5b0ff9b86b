// Streamed text in stream_chunks (DESIGN: Storage, "Streamed text"): appended per batch, read joined
// while the attempt runs, moved to streamed_text when it ends, and joined, redacted, capped and
// marked discarded by the sweep that closes an attempt a dead process cut off.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '@/lib/engine/types';
import { FAILURE_TEXT_MAX_CHARS } from '@/lib/redact';
import { closeDb, markInterrupted, openDb } from './client';
import { getRunFacts } from './queries';
import { LEASE_TTL_MS } from './run-lease';
import { runStore } from './run-store';

function freshDb() {
  const path = join(mkdtempSync(join(tmpdir(), 'aqven-db-')), 'aqven.db');
  return { path, db: openDb(path) };
}

/** A running run of a dead process (no lease) with one attempt in flight. */
function orphan(db: ReturnType<typeof openDb>, streamedText: string | null, chunks: string[]) {
  const c = db.$client;
  c.prepare(`INSERT INTO runs (id, project, flow, status, started_at) VALUES ('r', 'p', 'f', 'running', 1)`).run();
  c.prepare(`INSERT INTO node_runs (id, run_id, node_id, agent, turn, status, started_at) VALUES ('n', 'r', 'draft', 'writer', 1, 'running', 1)`).run();
  c.prepare(`INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, streamed_text, started_at) VALUES ('a', 'n', 'r', 1, 'm:x', 0, 1, ?, 1)`).run(
    streamedText,
  );
  chunks.forEach((t, i) => c.prepare(`INSERT INTO stream_chunks (attempt_id, seq, text) VALUES ('a', ?, ?)`).run(i, t));
}

const cutOff = (db: ReturnType<typeof openDb>) =>
  db.$client.prepare(`SELECT discarded, streamed_text AS text, finished_at AS f FROM attempts WHERE id = 'a'`).get() as {
    discarded: number;
    text: string | null;
    f: number | null;
  };

describe('stream_chunks', () => {
  it('batches are read joined while the attempt runs, and move to streamed_text when it ends', async () => {
    const { path, db } = freshDb();
    const s = runStore(db);
    await s.insertRun({ id: 'r', project: 'p', flow: 'f', input: {}, startedAt: 1 });
    s.insertNode({ id: 'n', runId: 'r', nodeId: 'draft', agent: 'writer', turn: 1, ord: 0, status: 'running', policy: null, startedAt: 1 });
    s.startAttempt({ id: 'a', nodeRunId: 'n', runId: 'r', seq: 1, model: 'm:x', chainIndex: 0, answerNo: 1, request: [], startedAt: 1 });
    for (const t of ['Dear ', 'customer, ', 'thanks ']) s.appendStreamed('a', t);
    s.flush();
    expect((await getRunFacts(db, 'r'))!.nodes[0]!.attempts[0]!.streamedText).toBe('Dear customer, thanks ');
    // a transport re-try mid-stream: the text starts afresh
    s.resetStreamed('a');
    s.appendStreamed('a', 'Hello ');
    s.flush();
    expect((await getRunFacts(db, 'r'))!.nodes[0]!.attempts[0]!.streamedText).toBe('Hello ');
    const end: AttemptRecord = {
      seq: 1,
      model: 'm:x',
      chainIndex: 0,
      answerNo: 1,
      outcome: 'ok',
      finishReason: 'stop',
      cause: null,
      action: 'none',
      request: [],
      responseText: 'Hello there.',
      error: null,
      validationErrors: [],
      discarded: false,
      streamedText: 'Hello there.',
      usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
      startedAt: 1,
      finishedAt: 2,
      tries: [],
    };
    await s.finishAttempt('a', end);
    expect((await getRunFacts(db, 'r'))!.nodes[0]!.attempts[0]!.streamedText).toBe('Hello there.');
    expect(db.$client.prepare(`SELECT count(*) AS n FROM stream_chunks`).get()).toEqual({ n: 0 });
    await closeDb(path);
  });

  it('the sweep closes a cut-off attempt discarded, its batches joined into streamed_text', async () => {
    const { path, db } = freshDb();
    orphan(db, null, ['Mail <EMAIL> ', 'about the <CARD>', ' today']);
    expect(await markInterrupted(db, Date.now() + LEASE_TTL_MS + 1)).toBe(1);
    expect(cutOff(db)).toMatchObject({ discarded: 1, text: 'Mail <EMAIL> about the <CARD> today' });
    expect(cutOff(db).f).not.toBeNull();
    expect(db.$client.prepare(`SELECT count(*) AS n FROM stream_chunks`).get()).toEqual({ n: 0 });
    await closeDb(path);
  });

  it('raw text an older version left in streamed_text is redacted by the sweep, and capped', async () => {
    const { path, db } = freshDb();
    const raw = `Write to anna@example.com. ${'more text '.repeat(FAILURE_TEXT_MAX_CHARS / 5)}`;
    orphan(db, raw, []);
    await markInterrupted(db, Date.now() + LEASE_TTL_MS + 1);
    const { discarded, text } = cutOff(db);
    expect(discarded).toBe(1);
    expect(text!.startsWith('Write to <EMAIL>. more text')).toBe(true);
    expect(text!.length).toBe(FAILURE_TEXT_MAX_CHARS);
    expect(text).toMatch(/… \[truncated: \d+ more characters\]$/);
    await closeDb(path);
  });
});
