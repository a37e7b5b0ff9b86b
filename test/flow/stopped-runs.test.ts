// Runs stopped before they end (DESIGN: Limits): by their caller's signal, by a process about to exit,
// by losing their lease. Each is recorded — the attempt in flight closed as interrupted, the run
// interrupted — and no late write of a run that changed hands reaches the database.
import { afterEach, describe, expect, it } from 'vitest';
import { markInterrupted } from '@/db/client';
import { LEASE_TTL_MS, leaseKeeper, LeaseLostError, takeOver } from '@/db/run-lease';
import type { SqliteDb } from '@/db/types';
import { activeRuns, interruptAllNow } from '@/lib/flow/active-runs';
import { beginRun, RunInterruptedError, RunNotRecordedError } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { simCost } from '@/lib/sim';
import { otherProcess } from '../helpers/dialects';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';
import { until } from '../helpers/until';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

/** A run of long-answer whose first request stalls until it is aborted; resolves once it reached the simulator. */
async function stalledRun(signal?: AbortSignal) {
  w = await world({ [GPT_OSS]: [{ kind: 'stall' }] });
  const { project, sim, db } = w;
  const { providers, env } = await import('@/lib/flow/simulate').then((m) => m.routeToSimulator(project, sim));
  const { runId, done } = await beginRun({ project, flow: 'long-answer', input: { question: 'q' }, providers, env, db, signal });
  await until('the request at the simulator', () => sim.requests().length === 1);
  return { runId, done, db };
}

/**
 * A triage run whose streamed draft stalls after `early`'s opening: with `early_usage`, the provider
 * reported usage (and streamed some text) before the silence. Resolves once the engine has read
 * the draft's first text (streamed after the usage), or — without early usage — once the request is in.
 */
async function stalledDraft(signal: AbortSignal, early: boolean) {
  const stall = early ? { kind: 'stall' as const, early_usage: true, text: 'Dear customer, ', usage: { input: 1200, output: 40 } } : { kind: 'stall' as const };
  w = await world({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [stall] });
  const { project, sim, db } = w;
  const { providers, env } = await import('@/lib/flow/simulate').then((m) => m.routeToSimulator(project, sim));
  let streamed = '';
  const onProgress = (e: { type: string; node?: string; event?: { type: string; text?: string } }) => {
    if (e.type === 'engine' && e.node === 'draft' && e.event?.type === 'delta') streamed += e.event.text;
  };
  const { runId, done } = await beginRun({ project, flow: 'triage', input: { ticket: 'I was charged twice' }, providers, env, db, signal, onProgress });
  if (early) await until('the draft streaming', () => streamed.length > 0);
  else await until('the draft at the simulator', () => sim.requests().length === 2);
  return { runId, done, db };
}

describe('stopped runs', () => {
  it('an attempt cut off after the provider reported usage is stored interrupted with that usage, priced; the node and run count it', async () => {
    const ac = new AbortController();
    const { runId, done, db } = await stalledDraft(ac.signal, true);
    ac.abort(new RunInterruptedError('stopped by SIGTERM'));
    const record = await done;
    expect(record.status).toBe('interrupted');
    const row = db.$client
      .prepare(`SELECT input_tokens AS i, output_tokens AS o, cost_usd AS c, usage_unknown AS u, outcome FROM attempts WHERE run_id = ? AND model = ?`)
      .get(runId, `openrouter:${GPT_OSS}`);
    // OpenRouter's own usage.cost is the price
    expect(row).toEqual({ i: 1200, o: 40, c: simCost(1200, 40), u: 0, outcome: null });
    const stored = (await getRunRecord(db, runId))!;
    const draft = stored.nodes.find((n) => n.id === 'draft')!;
    expect(draft).toMatchObject({ status: 'failed', error: { code: 'interrupted' } });
    expect(draft.attempts).toEqual([expect.objectContaining({ outcome: null, usageUnknown: false, usage: { inputTokens: 1200, outputTokens: 40, costUsd: simCost(1200, 40) } })]);
    expect(draft.usage).toEqual({ inputTokens: 1200, outputTokens: 40, costUsd: simCost(1200, 40) });
    const classify = stored.nodes.find((n) => n.id === 'classify')!;
    expect(stored.usage.inputTokens).toBe(classify.usage.inputTokens + 1200);
    expect(stored.usage.outputTokens).toBe(classify.usage.outputTokens + 40);
    expect(stored.usageUnknown).toBe(false);
    // the live record says the same
    expect(record.nodes.find((n) => n.id === 'draft')!.usage).toEqual(draft.usage);
    expect(record.usage).toEqual(stored.usage);
  });

  it('an attempt cut off before the provider reported any usage is stored with 0 tokens, usage unknown', async () => {
    const ac = new AbortController();
    const { runId, done, db } = await stalledDraft(ac.signal, false);
    ac.abort(new RunInterruptedError('stopped by SIGTERM'));
    const record = await done;
    expect(record.status).toBe('interrupted');
    const row = db.$client
      .prepare(`SELECT input_tokens AS i, output_tokens AS o, cost_usd AS c, usage_unknown AS u FROM attempts WHERE run_id = ? AND model = ?`)
      .get(runId, `openrouter:${GPT_OSS}`);
    expect(row).toEqual({ i: 0, o: 0, c: 0, u: 1 });
    const stored = (await getRunRecord(db, runId))!;
    expect(stored.nodes.find((n) => n.id === 'draft')!.attempts[0]).toMatchObject({ usageUnknown: true, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
    expect(stored.usageUnknown).toBe(true);
  });

  it("the caller's signal interrupts the run: the attempt in flight is closed as interrupted, the run ends interrupted", async () => {
    const ac = new AbortController();
    const { runId, done, db } = await stalledRun(ac.signal);
    ac.abort(new RunInterruptedError('stopped by SIGTERM'));
    const record = await done;
    expect(record).toMatchObject({ id: runId, status: 'interrupted', error: { code: 'interrupted', node: 'draft', message: 'the run was stopped by SIGTERM' } });
    const stored = (await getRunRecord(db, runId))!;
    expect(stored.status).toBe('interrupted');
    expect(stored.nodes[0]).toMatchObject({ id: 'draft', status: 'failed', error: { code: 'interrupted' } });
    expect(stored.nodes[0]!.attempts).toEqual([expect.objectContaining({ seq: 1, outcome: null, error: expect.objectContaining({ message: 'the run was stopped by SIGTERM' }) })]);
    expect(stored.nodes[0]!.attempts[0]!.latencyMs).not.toBeNull(); // closed, with its finish time
    expect(stored.nodes.slice(1).map((n) => n.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(activeRuns()).toEqual([]);
  });

  it('interruptAllNow records a running run interrupted synchronously (a process at its exit)', async () => {
    const { runId, done, db } = await stalledRun();
    expect(activeRuns().map((r) => r.runId)).toEqual([runId]);
    interruptAllNow('stopped: the process exited');
    // written before anything else ran: read back at once
    const row = db.$client.prepare('SELECT status FROM runs WHERE id = ?').get(runId);
    expect(row).toEqual({ status: 'interrupted' });
    expect((await getRunRecord(db, runId))!.nodes[0]!.attempts[0]).toMatchObject({ outcome: null, error: { message: 'the run was stopped: the process exited' } });
    expect((await done).status).toBe('interrupted');
  });

  it('a run whose lease is lost stops at once, and its late facts are refused', async () => {
    const { runId, done, db } = await stalledRun();
    // another process takes the run over after its lease expired (the clock injected)
    const o = otherProcess({ db, target: db.name, close: async () => undefined });
    const other = o.db as SqliteDb;
    try {
      expect(await takeOver(other, { runId, fence: 1 }, Date.now() + LEASE_TTL_MS + 1, 'worker-2')).not.toBeNull();
      await leaseKeeper(db).tick(); // the owner's next heartbeat finds the run gone
      const err = await done.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RunNotRecordedError);
      expect((err as RunNotRecordedError).reason).toBeInstanceOf(LeaseLostError);
      expect((err as RunNotRecordedError).record.status).toBe('interrupted');
      // nothing of the old owner landed after the take-over: the new owner's row is intact
      expect(other.$client.prepare('SELECT status, owner, fence FROM runs WHERE id = ?').get(runId)).toEqual({ status: 'running', owner: 'worker-2', fence: 2 });
      expect(other.$client.prepare('SELECT count(*) AS n FROM attempts WHERE run_id = ? AND finished_at IS NOT NULL').get(runId)).toEqual({ n: 0 });
    } finally {
      await o.close();
    }
  });

  it('a live run is not swept by its own process, however late the clock', async () => {
    const { runId, done, db } = await stalledRun();
    expect(await markInterrupted(db, Date.now() + 10 * LEASE_TTL_MS)).toBe(0);
    expect((await getRunRecord(db, runId))!.status).toBe('running');
    interruptAllNow('stopped by the test');
    await done;
  });
});
