// Storing streamed text (DESIGN: Storage, "Streamed text"): 12.5 MB and 50 MB of a stream's text
// through the real recorder (NodeRecorder: a batch per FLUSH_CHARS) and run store (write-behind,
// a commit per FLUSH_MS) into a real database file, timed from the first delta to the committed
// finished attempt. Three ways, in the same run, on the same machine:
//
// - before: the old write, `streamed_text = coalesce(streamed_text, '') || ?` per batch, which
//   copies the whole text so far on every batch (quadratic), committed with the same cadence;
// - after:  the store as it is: a stream_chunks row per batch, joined once when the attempt ends;
// - floor:  the text written once, whole, in one statement: what no streamed write can beat.
//
// Reported: each time, and before/after and after/floor as ratios. Run: npx tsx bench/stream-store.bench.ts
// Writes bench/results/stream-store.json.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { closeDb, openDb, type SqliteDb } from '@/db/client';
import { FLUSH_MS, runStore, type RunStore } from '@/db/run-store';
import { STREAM_SCAN_CHARS } from '@/lib/engine/call-node';
import type { AttemptRecord, EngineEvent } from '@/lib/engine/types';
import { NodeRecorder } from '@/lib/flow/recorder';
import { createStreamRedactor, redact, STREAM_HOLD_CHARS } from '@/lib/redact';
import { realisticText } from './redact.bench';
import { writeResult } from './write-result';

const MB = 1 << 20;

/** ASCII prose, so one character is one byte on disk. */
function streamText(chars: number): string {
  const words = 'the model streams a long answer with tokens arriving one after another while the dashboard shows them live '.split(' ');
  let out = '';
  for (let i = 0; out.length < chars; i++) out += `${words[i % words.length]} `;
  return out.slice(0, chars);
}

/** A run, a node and the rows they need, written directly (the bench times only the stream). */
function seedRun(db: SqliteDb): { runId: string; nodeRunId: string } {
  const runId = randomUUID();
  const nodeRunId = randomUUID();
  db.$client.prepare(`INSERT INTO runs (id, project, flow, status, started_at) VALUES (?, 'bench', 'stream', 'running', ?)`).run(runId, Date.now());
  db.$client
    .prepare(`INSERT INTO node_runs (id, run_id, node_id, agent, turn, status, started_at) VALUES (?, ?, 'draft', 'writer', 1, 'running', ?)`)
    .run(nodeRunId, runId, Date.now());
  return { runId, nodeRunId };
}

function attemptEnd(text: string, startedAt: number): AttemptRecord {
  return {
    seq: 1,
    model: 'bench:model',
    chainIndex: 0,
    answerNo: 1,
    outcome: 'ok',
    finishReason: 'stop',
    cause: null,
    action: 'none',
    request: [{ role: 'user', content: 'Write.' }],
    responseText: text,
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: text,
    usage: { inputTokens: 1, outputTokens: 1, costUsd: 0 },
    startedAt,
    finishedAt: Date.now(),
    tries: [],
  };
}

/**
 * The old store's streamed-text write, as it was: the same write-behind (a queue committed in one
 * transaction FLUSH_MS after its first fact), each batch appended with `||`.
 */
function legacyStore(db: SqliteDb, real: RunStore): RunStore {
  const c = db.$client;
  const start = c.prepare(`INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, request, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const append = c.prepare(`UPDATE attempts SET streamed_text = coalesce(streamed_text, '') || ? WHERE id = ?`);
  const finish = c.prepare(`UPDATE attempts SET outcome = ?, response_text = ?, streamed_text = ?, finished_at = ? WHERE id = ?`);
  let queue: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  const commit = c.transaction(() => {
    const q = queue;
    queue = [];
    for (const f of q) f();
  });
  const later = (f: () => void) => {
    queue.push(f);
    timer ??= setTimeout(() => {
      timer = null;
      commit();
    }, FLUSH_MS);
  };
  return {
    ...real,
    startAttempt: (a) => later(() => start.run(a.id, a.nodeRunId, a.runId, a.seq, a.model, a.chainIndex, a.answerNo, JSON.stringify(a.request), a.startedAt)),
    appendStreamed: (id, text) => later(() => append.run(text, id)),
    insertTry: () => {},
    finishAttempt: async (id, a) => {
      if (timer) clearTimeout(timer);
      timer = null;
      queue.push(() => finish.run(a.outcome, a.responseText, a.streamedText, a.finishedAt, id));
      commit();
    },
  };
}

/**
 * Streams `text` in `deltaChars` pieces through a recorder on `store`: ms until the finished attempt
 * is committed, and the longest the event loop was held by one commit (a stall the whole process sees).
 */
async function streamThrough(store: RunStore, db: SqliteDb, text: string, deltaChars: number): Promise<{ ms: number; stallMs: number }> {
  const { runId, nodeRunId } = seedRun(db);
  const rec = new NodeRecorder(store, runId, nodeRunId);
  const t0 = performance.now();
  const startedAt = Date.now();
  await rec.onEvent({
    type: 'attempt_start',
    nodeId: 'draft',
    seq: 1,
    model: 'bench:model',
    chainIndex: 0,
    answerNo: 1,
    request: [{ role: 'user', content: 'Write.' }],
    startedAt,
  });
  let sinceYield = 0;
  let stallMs = 0;
  for (let i = 0; i < text.length; i += deltaChars) {
    const piece = text.slice(i, i + deltaChars);
    const delta: EngineEvent = { type: 'delta', nodeId: 'draft', seq: 1, tryNo: 1, text: piece, stored: piece };
    await rec.onEvent(delta);
    // the engine awaits every handler; a stream's chunks arrive across event-loop turns, so the
    // store's timer-driven commits run between them
    if ((sinceYield += piece.length) >= 64 * 1024) {
      sinceYield = 0;
      const y0 = performance.now();
      await new Promise((r) => setImmediate(r));
      stallMs = Math.max(stallMs, performance.now() - y0);
    }
  }
  const e0 = performance.now();
  await rec.onEvent({ type: 'attempt_end', nodeId: 'draft', attempt: attemptEnd(text, startedAt) });
  stallMs = Math.max(stallMs, performance.now() - e0);
  return { ms: performance.now() - t0, stallMs };
}

/** The floor: the whole text written once, in one statement and one commit. */
function writeOnce(db: SqliteDb, text: string): number {
  const { runId, nodeRunId } = seedRun(db);
  const t0 = performance.now();
  db.$client
    .prepare(
      `INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, outcome, streamed_text, started_at, finished_at) VALUES (?, ?, ?, 1, 'bench:model', 0, 1, 'ok', ?, ?, ?)`,
    )
    .run(randomUUID(), nodeRunId, runId, text, Date.now(), Date.now());
  return performance.now() - t0;
}

export interface StreamStoreCase {
  mb: number;
  deltaChars: number;
  beforeMs: number;
  afterMs: number;
  floorMs: number;
  /** the longest the event loop was held by one commit */
  beforeStallMs: number;
  afterStallMs: number;
  /** how many times faster the store is than the old write */
  beforeOverAfter: number;
  /** how far the store is from writing the text once */
  afterOverFloor: number;
  beforeOverFloor: number;
}

/**
 * What the engine adds before a delta may be stored: the stream redactor over realistic text (PII
 * included) in 12-character deltas, a batch taken per STREAM_SCAN_CHARS past the held-back tail (as
 * call-node does), against `redact` over the whole text. MB/s of each.
 */
function streamRedaction(mb: number): { streamMbPerS: number; wholeMbPerS: number } {
  const text = realisticText(Math.round(mb * MB), 3);
  const runs = [0, 1, 2].map(() => streamRedactionOnce(text, mb));
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1]!;
  return { streamMbPerS: median(runs.map((r) => r.streamMbPerS)), wholeMbPerS: median(runs.map((r) => r.wholeMbPerS)) };
}

function streamRedactionOnce(text: string, mb: number): { streamMbPerS: number; wholeMbPerS: number } {
  const t0 = performance.now();
  const r = createStreamRedactor({ secrets: [{ value: 'sk-bench-0123456789abcdef', placeholder: '<API_KEY>' }] });
  let out = 0;
  for (let i = 0; i < text.length; i += 12) {
    r.push(text.slice(i, i + 12));
    if (r.pending >= STREAM_HOLD_CHARS + STREAM_SCAN_CHARS) out += r.take().length;
  }
  out += r.end().length;
  const streamMs = performance.now() - t0;
  const t1 = performance.now();
  const whole = redact(text).length;
  const wholeMs = performance.now() - t1;
  if (out !== whole) throw new Error(`stream redaction gave ${out} characters, the whole-text redaction ${whole}`);
  return { streamMbPerS: Math.round(mb / (streamMs / 1000)), wholeMbPerS: Math.round(mb / (wholeMs / 1000)) };
}

export async function runStreamStoreBench(
  opts: { sizesMb?: number[]; deltaChars?: number } = {},
): Promise<{ cases: StreamStoreCase[]; redaction: ReturnType<typeof streamRedaction> }> {
  const sizes = opts.sizesMb ?? [12.5, 50];
  // first, before the large texts below fill the heap
  const redaction = streamRedaction(10);
  // a fast stream's chunks as they reach the recorder; each is one batch (FLUSH_CHARS is 2048)
  const deltaChars = opts.deltaChars ?? 64 * 1024;
  const cases: StreamStoreCase[] = [];
  for (const mb of sizes) {
    const text = streamText(Math.round(mb * MB));
    const time = async (how: 'before' | 'after' | 'floor'): Promise<{ ms: number; stallMs: number }> => {
      // a fresh database file per measurement: no run sees another's pages
      const path = join(mkdtempSync(join(tmpdir(), 'aqven-bench-stream-')), 'aqven.db');
      const db = openDb(path);
      const store = runStore(db);
      try {
        if (how === 'floor') {
          const ms = writeOnce(db, text);
          return { ms, stallMs: ms };
        }
        return await streamThrough(how === 'before' ? legacyStore(db, store) : store, db, text, deltaChars);
      } finally {
        await closeDb(path);
      }
    };
    const floor = await time('floor');
    const after = await time('after');
    const before = await time('before');
    const [floorMs, afterMs, beforeMs] = [floor.ms, after.ms, before.ms];
    const r = (x: number) => Math.round(x);
    cases.push({
      mb,
      deltaChars,
      beforeMs: r(beforeMs),
      afterMs: r(afterMs),
      floorMs: r(floorMs),
      beforeStallMs: r(before.stallMs),
      afterStallMs: r(after.stallMs),
      beforeOverAfter: +(beforeMs / afterMs).toFixed(1),
      afterOverFloor: +(afterMs / floorMs).toFixed(2),
      beforeOverFloor: +(beforeMs / floorMs).toFixed(1),
    });
  }
  const result = { cases, redaction, target: 'after grows linearly with the text: afterOverFloor about the same at 12.5 and 50 MB' };
  writeResult('stream-store', result);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runStreamStoreBench().then((r) => console.table(r.cases));
}
