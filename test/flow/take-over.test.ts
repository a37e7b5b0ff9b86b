// A worker that dies loses nothing and duplicates nothing (DESIGN: Storage, "Leases"), on both
// dialects: another worker takes the run over once its lease expired — finished nodes are kept
// and not run again, the attempt the dead worker cut off is closed, the interrupted node restarts
// from its original request with its models' answers counted — and the dead worker's late writes
// are refused. A run handed back (a worker draining) is taken over at once.
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED_ATTEMPT_ERROR } from '@/db/interrupted-error';
import { expiredLeases, LEASE_TTL_MS, leaseKeeper, LeaseLostError, PROCESS_OWNER } from '@/db/run-lease';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import { takeOverRun } from '@/lib/flow/resume';
import { runLimitsProbe } from '@/lib/limits/probe';
import { beginRun, RunInterruptedError, RunNotRecordedError, type ProgressEvent } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import { routeToSimulator } from '@/lib/flow/simulate';
import { simCost } from '@/lib/sim';
import type { ScriptMap, SimRequestLog } from '@/lib/sim/types';
import { DIALECTS, otherProcess, type Dialect } from '../helpers/dialects';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';
import { until } from '../helpers/until';

let w: World<Db> | null = null;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  await w?.close();
  w = null;
});

const targetOf = (db: Db) => (db.dialect === 'pg' ? db.url : db.name);

/** The messages of a request at the simulator, and its last user message. */
const messagesOf = (r: SimRequestLog) => (r.body as { messages: { role: string; content: string }[] }).messages;
const lastUser = (r: SimRequestLog) =>
  messagesOf(r)
    .filter((m) => m.role === 'user')
    .at(-1)!.content;

async function open(dialect: Dialect, scripts: ScriptMap) {
  w = await worldOn(dialect, scripts);
  return { ...w, ...routeToSimulator(w.project, w.sim) };
}

/**
 * A run of `flow` by a worker that dies once `requests` requests reached the simulator and their
 * replies' headers reached it: its own connection (another process), what it queued written, then
 * no heartbeat any more. `kill()` stops what is left of it — its late writes — and resolves with
 * how its run ended for it.
 */
async function dyingRun(flow: string, input: unknown, requests: number) {
  const { project, sim, db } = w!;
  const dying = otherProcess({ db, target: targetOf(db), close: async () => undefined });
  const { providers, env } = routeToSimulator(project, sim);
  const ac = new AbortController();
  // the tries whose reply headers came in (a generation named) or that ended: the simulator counts a request before its headers leave
  const answered = new Set<string>();
  const onProgress = (e: ProgressEvent) => {
    if (e.type === 'engine' && (e.event.type === 'try_generation' || e.event.type === 'try_end')) {
      answered.add(`${e.node} ${e.event.seq} ${e.event.type === 'try_end' ? e.event.try.tryNo : e.event.tryNo}`);
    }
  };
  const { runId, done } = await beginRun({ project, flow, input, providers, env, db: dying.db, signal: ac.signal, onProgress });
  const ended = done.then(
    (record) => ({ record, error: null }),
    (error: unknown) => ({ record: null, error }),
  );
  await until(`${requests} requests at the simulator, their headers back`, () => sim.requests().length === requests && answered.size >= requests);
  await runStore(dying.db).flush(); // what it queued before it died is written
  leaseKeeper(dying.db).drop(runId); // and its lease is renewed no more
  let killed = false;
  const kill = async () => {
    if (!killed) ac.abort(new RunInterruptedError('killed'));
    killed = true;
    return ended;
  };
  cleanups.push(async () => {
    await kill();
    await dying.close();
  });
  return { runId, kill, dyingDb: dying.db };
}

async function runRow(db: Db, runId: string) {
  const { runs } = db.t;
  const [row] = await db.q
    .select({ status: runs.status, owner: runs.owner, fence: runs.fence, expires: runs.leaseExpiresAt, turns: runs.turns })
    .from(runs)
    .where(eq(runs.id, runId));
  return row!;
}

const nodeRowsOf = async (db: Db, runId: string) => {
  const { nodeRuns } = db.t;
  return (await db.q.select({ nodeId: nodeRuns.nodeId }).from(nodeRuns).where(eq(nodeRuns.runId, runId))).map((r) => r.nodeId).sort();
};

const later = () => Date.now() + LEASE_TTL_MS + 1;

describe.each(DIALECTS)('taking over a run on %s', (dialect) => {
  it("a dead worker's run is resumed: the finished node is kept and not re-run, the cut-off attempt closed, every node run once; the dead worker's late writes are refused", async () => {
    const { project, providers, env, sim, db } = await open(dialect, { [GPT_OSS]: [{ kind: 'ok' }, { kind: 'stall' }, { kind: 'ok' }] });
    const dead = await dyingRun('long-answer', { question: 'What happens on a crash?' }, 2);
    const { runId } = dead;
    const before = (await getRunRecord(db, runId))!;
    expect(before.nodes.map((n) => [n.id, n.status])).toEqual([
      ['draft', 'succeeded'],
      ['critique', 'running'],
    ]);

    // a live lease cannot be taken; an expired one is a candidate, taken by one compare-and-set
    expect(await takeOverRun({ db, runId, fence: 1, project, providers, env, now: Date.now(), owner: 'worker-2' })).toBeNull();
    const now = later();
    expect(await expiredLeases(db, now)).toEqual([expect.objectContaining({ runId, fence: 1 })]);
    const started = (await takeOverRun({ db, runId, fence: 1, project, providers, env, now, owner: 'worker-2' }))!;
    expect(started.runId).toBe(runId);
    const record = await started.done;
    expect(record.status).toBe('succeeded');

    const stored = (await getRunRecord(db, runId))!;
    expect(stored.status).toBe('succeeded');
    // the finished node: as it was, and never asked again
    expect(stored.nodes[0]).toEqual(before.nodes[0]);
    expect(sim.requests().filter((r) => lastUser(r).includes('Write a thorough'))).toHaveLength(1);
    // the interrupted node: its cut-off attempt closed, then its original request once more
    const critique = stored.nodes[1]!;
    expect(critique.attempts.map((a) => [a.seq, a.outcome, a.discarded])).toEqual([
      [1, null, true],
      [2, 'ok', false],
    ]);
    expect(critique.attempts[0]!.error).toMatchObject({ kind: INTERRUPTED_ATTEMPT_ERROR.kind, message: INTERRUPTED_ATTEMPT_ERROR.message });
    // write-ahead: its request had left, so its try is on record, cut off — the provider may have answered, and billed
    expect(critique.attempts[0]!.transport).toEqual([expect.objectContaining({ try: 1, status: null, error: 'cut_off' })]);
    expect(critique.attempts[0]!.usageUnknown).toBe(true);
    // and the generation its reply's headers named was kept, so its usage can be looked up (aqven runs reconcile)
    expect(['pending', 'found']).toContain(critique.attempts[0]!.usageLookup);
    // it ended when its worker was last seen alive, not at the take-over a lease's length later
    expect(critique.attempts[0]!.latencyMs).toBeLessThan(LEASE_TTL_MS);
    const asked = sim.requests().filter((r) => lastUser(r).includes('Critique this answer'));
    expect(asked).toHaveLength(2);
    expect(messagesOf(asked[1]!)).toEqual(messagesOf(asked[0]!));
    // each node once, in the turns an uninterrupted run gives them; the output is there once
    expect(stored.nodes.map((n) => [n.id, n.turn, n.status, n.output === null])).toEqual([
      ['draft', 1, 'succeeded', false],
      ['critique', 2, 'succeeded', false],
      ['revise', 3, 'succeeded', false],
      ['final', 4, 'succeeded', false],
    ]);
    expect(await nodeRowsOf(db, runId)).toEqual(['critique', 'draft', 'final', 'revise']);
    expect(Object.keys(stored.output as object)).toEqual(['final']);
    expect(stored.output).toEqual(record.output);
    expect(await runRow(db, runId)).toMatchObject({ status: 'succeeded', owner: 'worker-2', fence: 2, turns: 4 });

    // the dead worker wakes up: everything it writes is refused, and it is told
    const { error } = await dead.kill();
    expect(error).toBeInstanceOf(RunNotRecordedError);
    expect((error as RunNotRecordedError).reason).toBeInstanceOf(LeaseLostError);
    await expect(
      runStore(dead.dyingDb).finishRun({
        id: runId,
        status: 'failed',
        output: null,
        error: null,
        turns: 9,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        finishedAt: now,
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await runRow(db, runId)).toMatchObject({ status: 'succeeded', owner: 'worker-2', fence: 2, turns: 4 });
    expect(await getRunRecord(db, runId)).toEqual(stored);
  });

  it('an answer cut off in flight by the death counts: a model with one answer left after it is asked once more, with the original request', async () => {
    const invalid = { kind: 'invalid' as const };
    const { project, providers, env, sim, db } = await open(dialect, { [FLASH_LITE]: [invalid, invalid, { kind: 'stall' }, invalid] });
    const { runId } = await dyingRun('triage', { ticket: 'I was charged twice' }, 3);
    const started = (await takeOverRun({ db, runId, fence: 1, project, providers, env, now: later(), owner: 'worker-2' }))!;
    const record = await started.done;
    const flash = sim.requests().filter((r) => r.model === FLASH_LITE);
    // the third request was answered (the provider may have billed it): the fourth is the model's last
    expect(flash).toHaveLength(4);
    expect(messagesOf(flash[3]!)).toEqual(messagesOf(flash[0]!));
    const classify = (await getRunRecord(db, runId))!.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.seq, a.outcome, a.cause, a.action, a.transport.map((t) => t.error)])).toEqual([
      [1, 'ok', 'invalid_output', 'repair', [null]],
      [2, 'ok', 'invalid_output', 'repair', [null]],
      [3, null, null, 'none', ['cut_off']],
      [4, 'ok', 'invalid_output', 'none', [null]],
    ]);
    expect(classify.status).toBe('failed');
    expect(classify.error!.message).toContain(`openrouter:${FLASH_LITE} has given all 4 answers allowed (output.retries: 3)`);
    expect(classify.budget.models.map((m) => m.answers)).toEqual([4, 0]);
    // the failure routes through on_fail as it would have
    expect(record.status).toBe('succeeded');
    expect(Object.fromEntries(record.nodes.map((n) => [n.id, n.status]))).toEqual({ classify: 'failed', manual_review: 'succeeded', draft: 'skipped' });
  });

  it("a cut-off answer that was its model's last: not asked again, the node goes on as the policy says for an error (here: the fallback model)", async () => {
    const invalid = { kind: 'invalid' as const };
    const { project, providers, env, sim, db } = await open(dialect, { [FLASH_LITE]: [invalid, invalid, invalid, { kind: 'stall' }], [GPT_OSS]: [{ kind: 'ok' }] });
    const { runId } = await dyingRun('triage', { ticket: 'I was charged twice' }, 4);
    const started = (await takeOverRun({ db, runId, fence: 1, project, providers, env, now: later(), owner: 'worker-2' }))!;
    expect((await started.done).status).toBe('succeeded');
    expect(sim.requests().filter((r) => r.model === FLASH_LITE)).toHaveLength(4);
    const classify = (await getRunRecord(db, runId))!.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.seq, a.model, a.outcome, a.action, a.transport.map((t) => t.error)])).toEqual([
      [1, `openrouter:${FLASH_LITE}`, 'ok', 'repair', [null]],
      [2, `openrouter:${FLASH_LITE}`, 'ok', 'repair', [null]],
      [3, `openrouter:${FLASH_LITE}`, 'ok', 'repair', [null]],
      [4, `openrouter:${FLASH_LITE}`, null, 'none', ['cut_off']],
      [5, `openrouter:${GPT_OSS}`, 'ok', 'none', [null]],
    ]);
    expect(classify).toMatchObject({ status: 'succeeded', budget: { models: [{ answers: 4 }, { answers: 1 }] } });
  });

  it('a model that gave its retries + 1 answers before the death is not asked again: the node goes on on the fallback model', async () => {
    const invalid = { kind: 'invalid' as const };
    const { project, providers, env, sim, db } = await open(dialect, {
      [FLASH_LITE]: [invalid, invalid, invalid, { kind: 'provider_error' }],
      [GPT_OSS]: [{ kind: 'stall' }, { kind: 'ok' }],
    });
    const { runId } = await dyingRun('triage', { ticket: 'I was charged twice' }, 5);
    const started = (await takeOverRun({ db, runId, fence: 1, project, providers, env, now: later(), owner: 'worker-2' }))!;
    expect((await started.done).status).toBe('succeeded');
    expect(sim.requests().filter((r) => r.model === FLASH_LITE)).toHaveLength(4);
    const classify = (await getRunRecord(db, runId))!.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.seq, a.model, a.outcome, a.action])).toEqual([
      [1, `openrouter:${FLASH_LITE}`, 'ok', 'repair'],
      [2, `openrouter:${FLASH_LITE}`, 'ok', 'repair'],
      [3, `openrouter:${FLASH_LITE}`, 'ok', 'repair'],
      [4, `openrouter:${FLASH_LITE}`, 'error', 'fallback'],
      [5, `openrouter:${GPT_OSS}`, null, 'none'],
      [6, `openrouter:${GPT_OSS}`, 'ok', 'none'],
    ]);
    // the fallback model's answer cut off by the death counts too
    expect(classify).toMatchObject({ status: 'succeeded', budget: { models: [{ answers: 4 }, { answers: 2 }] } });
  });

  it('a node that failed before the death keeps its state, and its on_fail route goes on', async () => {
    const invalid = { kind: 'invalid' as const };
    const { project, providers, env, sim, db } = await open(dialect, { [FLASH_LITE]: [invalid], [GPT_OSS]: [{ kind: 'stall' }, { kind: 'ok' }] });
    const { runId } = await dyingRun('triage', { ticket: 'I was charged twice' }, 5);
    const before = (await getRunRecord(db, runId))!;
    expect(before.nodes.map((n) => [n.id, n.status])).toEqual([
      ['classify', 'failed'],
      ['draft', 'skipped'],
      ['manual_review', 'running'],
    ]);
    const started = (await takeOverRun({ db, runId, fence: 1, project, providers, env, now: later(), owner: 'worker-2' }))!;
    const record = await started.done;
    expect(record.status).toBe('succeeded');
    expect(Object.keys(record.output as object)).toEqual(['manual_review']);
    const stored = (await getRunRecord(db, runId))!;
    expect(stored.nodes.slice(0, 2)).toEqual(before.nodes.slice(0, 2));
    expect(stored.nodes.map((n) => [n.id, n.turn, n.status])).toEqual([
      ['classify', 1, 'failed'],
      ['draft', 1, 'skipped'],
      ['manual_review', 2, 'succeeded'],
    ]);
    expect(stored.nodes[2]!.attempts.map((a) => [a.seq, a.outcome])).toEqual([
      [1, null],
      [2, 'ok'],
    ]);
    expect(sim.requests().filter((r) => r.model === FLASH_LITE)).toHaveLength(4);
  });

  it('a run whose flow the newer project no longer has ends failed (unknown_flow), its running node with it', async () => {
    const { project, providers, env, db } = await open(dialect, { [GPT_OSS]: [{ kind: 'ok' }, { kind: 'stall' }] });
    const { runId } = await dyingRun('long-answer', { question: 'q' }, 2);
    const without = { ...project, flows: { triage: project.flows.triage! } };
    const started = (await takeOverRun({ db, runId, fence: 1, project: without, providers, env, now: later(), owner: 'worker-2' }))!;
    const record = await started.done;
    expect(record).toMatchObject({ status: 'failed', error: { code: 'unknown_flow' } });
    const stored = (await getRunRecord(db, runId))!;
    expect(stored.status).toBe('failed');
    expect(stored.nodes.map((n) => [n.id, n.status, n.error?.code ?? null])).toEqual([
      ['draft', 'succeeded', null],
      ['critique', 'failed', 'unknown_flow'],
    ]);
    expect(await runRow(db, runId)).toMatchObject({ status: 'failed', owner: 'worker-2', fence: 2 });
  });

  it('a limits run whose process died is not carried on: it ends interrupted, its measurement left partial for the next probe to resume', async () => {
    // every answer stalls: the probe's first level (its 2 trials at once) never ends
    const { project, providers, env, db, sim } = await open(dialect, { [FLASH_LITE]: Array.from({ length: 6 }, () => ({ kind: 'stall' as const })) });
    const dying = otherProcess({ db, target: targetOf(db), close: async () => undefined });
    const ac = new AbortController();
    const probe = runLimitsProbe(
      { project, db: dying.db, providers, env },
      {
        model: `openrouter:${FLASH_LITE}`,
        dimensions: ['depth'],
        trials: 2,
        threshold: 0.9,
        maxCalls: 10,
        maxCostUsd: 1,
        maxTokens: 1024,
        startedBy: 'cli:test',
        signal: ac.signal,
      },
    ).catch(() => null);
    cleanups.push(async () => {
      ac.abort(new Error('killed'));
      await probe;
      await dying.close();
    });
    await until("the first level's 2 trials at the simulator", () => sim.requests().length === 2);
    const limitsRow = async () => (await db.q.select({ status: db.t.modelLimits.status, runId: db.t.modelLimits.runId }).from(db.t.modelLimits))[0]!;
    const { runId } = await limitsRow();
    await runStore(dying.db).flush();
    leaseKeeper(dying.db).drop(runId!);
    expect(await limitsRow()).toEqual({ status: 'running', runId });

    const sent = sim.requests().length;
    const started = (await takeOverRun({ db, runId: runId!, fence: 1, project, providers, env, now: later(), owner: 'worker-2' }))!;
    const record = await started.done;
    expect(record).toMatchObject({ status: 'interrupted', error: { code: 'interrupted', message: expect.stringContaining('is not carried on by another process') } });
    expect(await runRow(db, runId!)).toMatchObject({ status: 'interrupted', owner: 'worker-2' });
    expect(await limitsRow()).toEqual({ status: 'partial', runId });
    expect(sim.requests()).toHaveLength(sent); // the take-over sent nothing
  });

  it('two workers taking the same run over at once: exactly one wins', async () => {
    const { project, providers, env, db } = await open(dialect, { [GPT_OSS]: [{ kind: 'ok' }, { kind: 'stall' }, { kind: 'ok' }] });
    const { runId } = await dyingRun('long-answer', { question: 'q' }, 2);
    const now = later();
    const tries = await Promise.all(['worker-a', 'worker-b'].map((owner) => takeOverRun({ db, runId, fence: 1, project, providers, env, now, owner })));
    const won = tries.filter((t) => t !== null);
    expect(won).toHaveLength(1);
    expect((await won[0]!.done).status).toBe('succeeded');
    const row = await runRow(db, runId);
    expect(row).toMatchObject({ status: 'succeeded', fence: 2 });
    expect(row.owner).toBe(tries[0] ? 'worker-a' : 'worker-b');
    expect(await nodeRowsOf(db, runId)).toEqual(['critique', 'draft', 'final', 'revise']);
  });

  it('a run handed back stays running with its lease released and its attempt in flight closed (usage kept); another worker finishes it', async () => {
    const stall = { kind: 'stall' as const, early_usage: true, text: 'Dear customer, ', usage: { input: 1200, output: 40 } };
    const { project, providers, env, sim, db } = await open(dialect, { [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [stall, { kind: 'ok' }] });
    let streamed = '';
    const onProgress = (e: ProgressEvent) => {
      if (e.type === 'engine' && e.node === 'draft' && e.event.type === 'delta') streamed += e.event.text;
    };
    const started = await beginRun({ project, flow: 'triage', input: { ticket: 'I was charged twice' }, providers, env, db, onProgress });
    const { runId } = started;
    await until('the draft streaming', () => streamed.length > 0);
    const handedBackAt = Date.now();
    await started.handBack('stopped by SIGTERM');
    const left = await started.done;
    expect(left.status).toBe('running');

    // as another process reads it the moment the hand-back resolved: closed, committed, released
    const other = otherProcess({ db, target: targetOf(db), close: async () => undefined });
    cleanups.push(() => other.close());
    const row = await runRow(other.db, runId);
    expect(row).toMatchObject({ status: 'running', owner: PROCESS_OWNER, fence: 1, turns: 2 });
    expect(row.expires).toBeLessThanOrEqual(Date.now());
    expect(row.expires).toBeGreaterThanOrEqual(handedBackAt - 1);
    const seen = (await getRunRecord(other.db, runId))!;
    expect(seen.nodes.map((n) => [n.id, n.status])).toEqual([
      ['classify', 'succeeded'],
      ['draft', 'running'],
    ]);
    const cut = seen.nodes[1]!.attempts[0]!;
    expect(cut).toMatchObject({ seq: 1, outcome: null, discarded: true, usageUnknown: false, usage: { inputTokens: 1200, outputTokens: 40, costUsd: simCost(1200, 40) } });
    expect(cut.error!.message).toBe('the run was handed back (stopped by SIGTERM); another worker resumes it');
    expect(cut.latencyMs).not.toBeNull();

    // claimable at once, without waiting for a lease to run out
    const [candidate] = await expiredLeases(db, Date.now());
    expect(candidate).toMatchObject({ runId, fence: 1 });
    const resumed = (await takeOverRun({ db, runId, fence: candidate!.fence, project, providers, env }))!;
    const record = await resumed.done;
    expect(record.status).toBe('succeeded');
    const draft = record.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts.map((a) => [a.seq, a.outcome])).toEqual([
      [1, null],
      [2, 'ok'],
    ]);
    // the cut-off attempt's tokens count in the node's usage
    expect(draft.usage.inputTokens).toBe(1200 + draft.attempts[1]!.usage.inputTokens);
    expect(sim.requests().filter((r) => r.model === FLASH_LITE)).toHaveLength(1);
    expect(await getRunRecord(db, runId)).toEqual(record);
    expect(await runRow(db, runId)).toMatchObject({ status: 'succeeded', fence: 2, turns: 2 });
  });
});
