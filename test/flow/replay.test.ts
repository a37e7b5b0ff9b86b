// Replay with the current policy, over the simulator on both dialects: a node that failed under
// one policy is run again, with its original inputs, under the agent file as it is now — a new run
// of kind `replay` recorded like any run — and a batch of them keeps to its concurrency and its cap.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { replayLink, replaysOf } from '@/db/replay-queries';
import { leaseKeeper, LEASE_TTL_MS } from '@/db/run-lease';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import { takeOverRun } from '@/lib/flow/resume';
import { RunInterruptedError } from '@/lib/flow/run-flow';
import { routeToSimulator } from '@/lib/flow/simulate';
import { estimateReplay, planReplay, promptDiff, ReplayRefusedError, startReplay, type ReplayDeps } from '@/lib/flow/replay';
import { runReplayBatch } from '@/lib/flow/replay-batch';
import { loadProject } from '@/lib/project';
import { DIALECTS, otherProcess } from '../helpers/dialects';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';
import { until } from '../helpers/until';

let w: World<Db> | null = null;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  await w?.close();
  w = null;
});

const TICKET = { ticket: 'My invoice is wrong' };
// every answer costs the same: OpenRouter's simulated price, $0.50 / $1.50 per 1M tokens
const ERROR = { kind: 'provider_error', usage: { input: 1000, output: 0 } } as const; // $0.0005
const OK = { kind: 'ok', usage: { input: 1000, output: 1000 } } as const; // $0.002

/** Policy A → B: the writer (node `draft`) gains a fallback model and falls back on an error. */
function addFallback(dir: string): void {
  const file = join(dir, 'agents', 'writer.yaml');
  const text = readFileSync(file, 'utf8');
  const next = text
    .replace('model: "openrouter:openai/gpt-oss-20b"\n', `model: "openrouter:openai/gpt-oss-20b"\nfallback_models:\n- "openrouter:${FLASH_LITE}"\n`)
    .replace('on_error: "retry"', 'on_error: "fallback"');
  expect(next).not.toBe(text);
  writeFileSync(file, next);
}

/** The project as its files are now, routed to the world's simulator. */
async function today(world: World<Db>): Promise<ReplayDeps> {
  const { project, diagnostics } = await loadProject(world.dir, { env: {} });
  if (!project) throw new Error(JSON.stringify(diagnostics));
  const { providers, env } = routeToSimulator(project, world.sim);
  return { project, providers, env, db: world.db };
}

/** A triage run whose `draft` failed: gpt-oss errors on every answer, and the writer has no fallback (policy A). */
async function failedDraft(world: World<Db>) {
  const r = await world.run('triage', TICKET);
  expect(r.status).toBe('failed');
  expect(r.nodes.find((n) => n.id === 'draft')).toMatchObject({ status: 'failed' });
  return r;
}

const replayRows = async (db: Db) => db.q.select().from(db.t.runs).where(eq(db.t.runs.kind, 'replay'));

describe.each(DIALECTS)('replay with the current policy, on %s', (dialect) => {
  it('a node that failed under policy A succeeds on replay once the agent falls back; the replay is its own run, linked and recorded', async () => {
    w = await worldOn(dialect, { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const original = await failedDraft(w);
    const before = await getRunFacts(w.db, original.id);

    addFallback(w.dir);
    const deps = await today(w);
    const plan = await planReplay(w.db, deps.project, original.id, 'draft');
    // its inputs are the original's: the run input and classify's stored output
    expect(plan.outputs).toEqual({ classify: original.nodes.find((n) => n.id === 'classify')!.output });
    expect(plan.policyBefore?.chain).toEqual([`openrouter:${GPT_OSS}`]);
    expect(plan.policyNow.chain).toEqual([`openrouter:${GPT_OSS}`, `openrouter:${FLASH_LITE}`]);

    const started = await startReplay(plan, { ...deps, startedBy: 'ana' });
    const result = await started.done;
    expect(result).toMatchObject({ status: 'succeeded', capped: false });

    // a run of kind replay, naming the run and node it replays, started by who asked
    expect(await replayLink(w.db, started.runId)).toEqual({ kind: 'replay', replayOf: original.id, replayNode: 'draft' });
    expect(await replaysOf(w.db, original.id)).toMatchObject([{ id: started.runId, node: 'draft', status: 'succeeded', startedBy: 'ana' }]);
    // recorded like any run: only the replayed node, every attempt — the error, then the fallback's answer
    const facts = (await getRunFacts(w.db, started.runId))!;
    expect(facts).toMatchObject({ flow: 'triage', status: 'succeeded', input: TICKET, startedBy: 'ana' });
    expect(facts.nodes.map((n) => n.id)).toEqual(['draft']);
    const draft = facts.nodes[0]!;
    expect(draft.attempts.map((a) => [a.model, a.outcome, a.action])).toEqual([
      [`openrouter:${GPT_OSS}`, 'error', 'fallback'],
      [`openrouter:${FLASH_LITE}`, 'ok', 'none'],
    ]);
    expect(draft.attempts[0]!.request).toEqual(plan.request);
    expect(draft.attempts[0]!.request.at(-1)!.content).toContain('billing');
    expect(facts.output).toEqual({ draft: draft.output });
    expect(result.costUsd).toBeCloseTo(0.0025, 9);
    // the original is left as it was
    expect(await getRunFacts(w.db, original.id)).toEqual(before);
    expect(await replayLink(w.db, original.id)).toEqual({ kind: 'flow', replayOf: null, replayNode: null });
  });

  it('the prompt diff shows a changed prompt line by line, and nothing when the files are as they were', async () => {
    w = await worldOn(dialect, { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const original = await failedDraft(w);
    const same = promptDiff(await planReplay(w.db, (await today(w)).project, original.id, 'draft'));
    expect(same.changed).toBe(false);
    expect(same.lines.every((l) => l.op === ' ')).toBe(true);

    const flowFile = join(w.dir, 'flows', 'triage.yaml');
    writeFileSync(flowFile, readFileSync(flowFile, 'utf8').replace('"Draft a reply for the', '"Write a short, kind reply for the'));
    const diff = promptDiff(await planReplay(w.db, (await today(w)).project, original.id, 'draft'));
    expect(diff.changed).toBe(true);
    expect(diff.lines.filter((l) => l.op !== ' ')).toEqual([
      { op: '-', text: `Draft a reply for the billing queue: ${TICKET.ticket}` },
      { op: '+', text: `Write a short, kind reply for the billing queue: ${TICKET.ticket}` },
    ]);
    // the system prompt did not change: it stays as context
    expect(diff.lines).toContainEqual({ op: ' ', text: '── system ──' });
  });

  it('refuses a node whose needed input was never produced, naming it; nothing is recorded', async () => {
    // classify fails on both models: draft is skipped (its need failed), manual_review runs instead
    w = await worldOn(dialect, { [FLASH_LITE]: [ERROR], [GPT_OSS]: [ERROR] });
    const r = await w.run('triage', TICKET);
    expect(r.nodes.find((n) => n.id === 'draft')).toMatchObject({ status: 'skipped' });
    const deps = await today(w);
    const refused = await planReplay(w.db, deps.project, r.id, 'draft').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ReplayRefusedError);
    expect(refused).toMatchObject({ code: 'E_INPUT_MISSING' });
    expect((refused as Error).message).toMatch(/needs the output of "classify", which failed in that run/);
    expect(await planReplay(w.db, deps.project, r.id, 'nope').catch((e: unknown) => e)).toMatchObject({ code: 'E_NODE' });
    expect(await planReplay(w.db, deps.project, 'no-such-run', 'draft').catch((e: unknown) => e)).toMatchObject({ code: 'E_RUN' });
    expect(await replayRows(w.db)).toHaveLength(0);
  });

  it('a cost cap refuses a replay estimated over it, and stops one whose spending passes it', async () => {
    w = await worldOn(dialect, { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const original = await failedDraft(w);
    addFallback(w.dir);
    const deps = await today(w);
    const plan = await planReplay(w.db, deps.project, original.id, 'draft');
    const est = await estimateReplay(w.db, plan);
    // the original draft cost two errors; the writer's history is that node alone
    expect(est).toMatchObject({ costUsd: 0.001, originalCostUsd: 0.001, history: { nodes: 1 } });

    const refused = await startReplay(plan, deps, { capUsd: 0.0009, estimateUsd: est.costUsd }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'E_CAP' });
    expect(await replayRows(w.db)).toHaveLength(0);

    // an estimate that turns out low: the first error ($0.0005) reaches the cap, so the fallback model is never called
    const started = await startReplay(plan, deps, { capUsd: 0.0005, estimateUsd: 0.0004 });
    const result = await started.done;
    expect(result).toMatchObject({ status: 'interrupted', capped: true });
    expect(result.record.error?.message).toMatch(/cost cap of \$0\.0005/);
    expect(result.costUsd).toBeCloseTo(0.0005, 9);
    const facts = (await getRunFacts(w.db, started.runId))!;
    expect(facts.status).toBe('interrupted');
    expect(facts.nodes[0]!.attempts.map((a) => a.model)).toEqual([`openrouter:${GPT_OSS}`]);

    // an answer already paid for is kept, even past the cap: it ends the node, no attempt follows
    const paid = await (await startReplay(plan, deps, { capUsd: 0.001, estimateUsd: est.costUsd })).done;
    expect(paid).toMatchObject({ status: 'succeeded', capped: false });
    expect(paid.costUsd).toBeCloseTo(0.0025, 9);
  });
});

describe.each(DIALECTS)('a replay taken over from a dead process, on %s', (dialect) => {
  it('goes on as its one node with the original inputs, never as its whole flow', async () => {
    w = await worldOn(dialect, { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const original = await failedDraft(w);
    addFallback(w.dir);
    const deps = await today(w);
    const plan = await planReplay(w.db, deps.project, original.id, 'draft');
    // the replaying process (its own connection) dies while gpt-oss has not answered yet
    w.sim.loadScripts({ [FLASH_LITE]: [OK], [GPT_OSS]: [{ kind: 'stall' }, ERROR] });
    const { db, sim } = w;
    const dying = otherProcess({ db, target: db.dialect === 'pg' ? db.url : db.name, close: async () => undefined });
    const ac = new AbortController();
    const sent = sim.requests().length;
    const first = await startReplay(plan, { ...deps, db: dying.db }, { signal: ac.signal });
    const ended = first.done.catch(() => null);
    cleanups.push(async () => {
      ac.abort(new RunInterruptedError('killed'));
      await ended;
      await dying.close();
    });
    await until('the replay at the simulator', () => sim.requests().length === sent + 1);
    await runStore(dying.db).flush();
    leaseKeeper(dying.db).drop(first.runId);

    const started = (await takeOverRun({
      db,
      runId: first.runId,
      fence: 1,
      project: deps.project,
      providers: deps.providers,
      env: deps.env,
      now: Date.now() + LEASE_TTL_MS + 1,
      owner: 'worker-2',
    }))!;
    const record = await started.done;
    expect(record.status).toBe('succeeded');
    expect(record.nodes.map((n) => n.id)).toEqual(['draft']);
    expect(await replayLink(db, first.runId)).toEqual({ kind: 'replay', replayOf: original.id, replayNode: 'draft' });
    // the restarted node sent the replay's request again: classify's stored output, not a new one
    expect(
      sim
        .requests()
        .slice(sent)
        .every((r) => !JSON.stringify(r).includes('Sort this ticket')),
    ).toBe(true);
  });
});

describe('replaying a failure group in bulk', () => {
  it('runs at most `concurrency` replays at once, and reports how many now succeed', async () => {
    w = await worldOn('sqlite', { [FLASH_LITE]: [{ ...OK, latency: { first_token_ms: 120 } }], [GPT_OSS]: [ERROR] });
    const originals = [];
    for (let i = 0; i < 6; i++) originals.push(await failedDraft(w));
    addFallback(w.dir);
    const deps = await today(w);
    const seen: number[] = [];
    const summary = await runReplayBatch(
      originals.map((r) => ({ runId: r.id, nodeId: 'draft' })),
      { concurrency: 2, capUsd: null, deps: () => deps, onProgress: (p) => seen.push(p.counts.running) },
    );
    expect(summary).toMatchObject({ total: 6, done: true, stopped: null, counts: { succeeded: 6, failed: 0, not_started: 0, refused: 0, running: 0, waiting: 0 } });
    expect(Math.max(...seen)).toBe(2);
    // as stored: never more than two replay runs overlap in time, and two did
    const rows = await replayRows(w.db);
    expect(rows).toHaveLength(6);
    const overlapAt = (t: number) => rows.filter((r) => r.startedAt <= t && t < r.finishedAt!).length;
    expect(Math.max(...rows.map((r) => overlapAt(r.startedAt)))).toBe(2);
    expect(new Set(rows.map((r) => r.replayOf))).toEqual(new Set(originals.map((r) => r.id)));
  });

  it('stops at the batch cost cap: no replay starts that would pass it, the rest are not started', async () => {
    w = await worldOn('sqlite', { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const originals = [];
    for (let i = 0; i < 5; i++) originals.push(await failedDraft(w));
    addFallback(w.dir);
    const deps = await today(w);
    // each replay is estimated at $0.001 (the original drafts' cost) and costs $0.0025:
    // the 1st starts (0 + 0.001 ≤ 0.0055), the 2nd too (0.0025 + 0.001), the 3rd would pass it (0.005 + 0.001)
    const summary = await runReplayBatch(
      originals.map((r) => ({ runId: r.id, nodeId: 'draft' })),
      { concurrency: 1, capUsd: 0.0055, deps: () => deps },
    );
    expect(summary.counts).toMatchObject({ succeeded: 2, not_started: 3, failed: 0 });
    expect(summary.stopped).toMatch(/cost cap of \$0\.00550 would be passed/);
    expect(summary.items.slice(2).every((i) => i.state === 'not_started' && i.replayRunId === null)).toBe(true);
    expect(summary.spentUsd).toBeCloseTo(0.005, 9);
    expect(await replayRows(w.db)).toHaveLength(2);
  });

  it('once the batch reaches its cap, the replays still running are stopped', async () => {
    w = await worldOn('sqlite', { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const originals = [];
    for (let i = 0; i < 4; i++) originals.push(await failedDraft(w));
    addFallback(w.dir);
    // the first fallback answer comes at once, the second only after 5 s: it is still running when the first lands
    w.sim.loadScripts({ [FLASH_LITE]: [OK, { ...OK, latency: { first_token_ms: 5000 } }], [GPT_OSS]: [ERROR] });
    const deps = await today(w);
    const t0 = Date.now();
    const summary = await runReplayBatch(
      originals.map((r) => ({ runId: r.id, nodeId: 'draft' })),
      { concurrency: 2, capUsd: 0.0025, deps: () => deps },
    );
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(summary.counts).toMatchObject({ succeeded: 1, failed: 1, not_started: 2 });
    expect(summary.stopped).toMatch(/cost cap of \$0\.00250 was reached/);
    const stopped = summary.items.find((i) => i.state === 'failed')!;
    expect(stopped.reason).toMatch(/reached its cost cap/);
    expect((await getRunFacts(w.db, stopped.replayRunId!))!.status).toBe('interrupted');
  });

  it('a rate limit refusal stops the batch, the rest not started', async () => {
    w = await worldOn('sqlite', { [FLASH_LITE]: [OK], [GPT_OSS]: [ERROR] });
    const originals = [await failedDraft(w), await failedDraft(w), await failedDraft(w)];
    addFallback(w.dir);
    const deps = await today(w);
    let admitted = 0;
    const summary = await runReplayBatch(
      originals.map((r) => ({ runId: r.id, nodeId: 'draft' })),
      { concurrency: 1, capUsd: null, deps: () => deps, admit: async () => (++admitted > 1 ? 'too many runs started' : null) },
    );
    expect(summary.counts).toMatchObject({ succeeded: 1, not_started: 2 });
    expect(summary.stopped).toBe('too many runs started');
    expect(await replayRows(w.db)).toHaveLength(1);
  });
});
