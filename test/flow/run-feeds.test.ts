// What recording a run feeds (DESIGN: Storage, "Notes, search and daily statistics"), on both
// dialects, through the real store over the simulator: the run's input, its nodes' outputs and its
// failures' text are searchable; failed attempts and nodes carry their failure signature; the daily
// sums equal a scan of the attempts and node runs of the flow runs. A replay is searchable and
// counted nowhere.
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentStats } from '@/db/agent-queries';
import { markInterrupted } from '@/db/client';
import { LEASE_TTL_MS, leaseKeeper, newLease } from '@/db/run-lease';
import { runStore } from '@/db/run-store';
import type { Db } from '@/db/types';
import type { RunRecord } from '@/lib/flow/run-record';
import { DIALECTS } from '../helpers/dialects';
import { scanned, stored } from '../helpers/feeds-scan';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';

describe.each(DIALECTS)('what a recorded run feeds, on %s', (dialect) => {
  let w: World<Db>;
  let repaired: RunRecord; // classify answers off-schema once, then well
  let routed: RunRecord; // classify refuses: the run goes on through manual_review
  let failed: RunRecord; // the draft errors twice: the run fails
  beforeAll(async () => {
    w = await worldOn(dialect, {});
    w.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'invalid', mode: 'wrong_enum' }, { kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok', text: 'Dear customer, your refund is on its way.' }] });
    repaired = await w.run('triage', { ticket: 'Refund for invoice zebra-4411 please' });
    w.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'refusal' }], [GPT_OSS]: [{ kind: 'ok', text: 'Customer asks about a quokka-shaped charge.' }] });
    routed = await w.run('triage', { ticket: 'Why is there a quokka on my bill?' });
    w.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'provider_error', message: 'upstream overloaded (request req_8f2k1x9z0a)' }] });
    failed = await w.run('triage', { ticket: 'My walrus subscription renewed twice' });
  }, 120_000);
  afterAll(() => w?.close());

  const docs = async (runId: string) => {
    const d = w.db.t.searchDocs;
    return w.db.q.select({ nodeRunId: d.nodeRunId, attemptId: d.attemptId, field: d.field, body: d.body }).from(d).where(eq(d.runId, runId));
  };

  it('recorded the three runs as scripted', () => {
    expect([repaired.status, routed.status, failed.status]).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(routed.nodes.find((n) => n.id === 'classify')!.status).toBe('failed');
  });

  it("makes a run's input, its nodes' outputs and its failures' text searchable", async () => {
    const rd = await docs(repaired.id);
    expect(rd.filter((d) => d.field === 'input').map((d) => d.body)).toEqual([JSON.stringify({ ticket: 'Refund for invoice zebra-4411 please' })]);
    // a JSON output as JSON text, a text output as its text
    const outputs = rd.filter((d) => d.field === 'output').map((d) => d.body);
    expect(outputs).toContain('Dear customer, your refund is on its way.');
    expect(outputs.some((b) => JSON.parse(b).queue !== undefined)).toBe(true);
    // the off-schema answer: its stored error message (redacted) and its validation issues
    const [invalid] = rd.filter((d) => d.field === 'error');
    expect(invalid!.attemptId).not.toBeNull();
    expect(invalid!.body).toMatch(/does not match the node's output schema/);
    expect(invalid!.body).toMatch(/\n\/queue /);

    const fd = await docs(failed.id);
    const errors = fd.filter((d) => d.field === 'error');
    // two attempts of the draft and the draft itself
    expect(errors.filter((d) => d.attemptId !== null)).toHaveLength(2);
    expect(errors.filter((d) => d.attemptId === null && d.nodeRunId !== null)).toHaveLength(1);
    expect(errors.every((d) => d.body.includes('upstream overloaded'))).toBe(true);
  });

  it('stamps each failed attempt and node with its signature, and only those', async () => {
    const { sigs } = await scanned(w.db);
    expect((await stored(w.db)).sigs).toEqual(sigs);
    const { attempts } = w.db.t;
    const stamped = await w.db.q
      .select({ sig: attempts.failureSig })
      .from(attempts)
      .where(and(eq(attempts.runId, failed.id), isNotNull(attempts.failureSig)));
    // the same error twice, its request id aside: one signature
    expect(stamped).toHaveLength(2);
    expect(stamped[0]!.sig).toBe(stamped[1]!.sig);
  });

  it('keeps the daily sums equal to a scan of the flow runs', async () => {
    const live = await stored(w.db);
    const scan = await scanned(w.db);
    expect(live.agentDaily).toEqual(scan.agentDaily);
    expect(live.nodeDaily).toEqual(scan.nodeDaily);
    expect(live.failureDaily).toEqual(scan.failureDaily);
    expect(scan.failureDaily.length).toBeGreaterThanOrEqual(4); // invalid, refusal, provider error; the failed nodes
  });

  it('a replay is searchable and counted in no sum', async () => {
    const before = await stored(w.db);
    const stats = await agentStats(w.db);
    w.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'refusal' }], [GPT_OSS]: [{ kind: 'ok', text: 'A platypus replay.' }] });
    const replay = await w.run('triage', { ticket: 'Replay the platypus ticket' }, { runKind: { kind: 'replay', replayOf: routed.id, replayNode: 'classify' } });
    const { runs } = w.db.t;
    expect(await w.db.q.select({ kind: runs.kind, replayOf: runs.replayOf, replayNode: runs.replayNode }).from(runs).where(eq(runs.id, replay.id))).toEqual([
      { kind: 'replay', replayOf: routed.id, replayNode: 'classify' },
    ]);
    const rd = await docs(replay.id);
    expect(rd.map((d) => d.field).sort()).toEqual(['error', 'error', 'input', 'output']);
    const after = await stored(w.db);
    expect([after.agentDaily, after.nodeDaily, after.failureDaily]).toEqual([before.agentDaily, before.nodeDaily, before.failureDaily]);
    expect(await agentStats(w.db)).toEqual(stats);
    // its failures are signed all the same (a replay shows which group it reproduces)
    expect(Object.values(after.sigs).filter(Boolean).length).toBeGreaterThan(Object.values(before.sigs).filter(Boolean).length);
  });

  it("the sweep fails a dead run's nodes as a run fails its own: signed, searchable, counted", async () => {
    const s = runStore(w.db);
    const t0 = Date.UTC(2026, 0, 2, 12);
    const run = `swept-${dialect}`;
    await s.insertRun({ id: run, project: 'p', flow: 'triage', input: { ticket: 'narwhal' }, startedAt: t0, lease: newLease(run, t0) });
    s.insertNode({ id: `${run}-n`, runId: run, nodeId: 'classify', agent: 'classifier', turn: 1, ord: 0, status: 'running', policy: null, startedAt: t0 });
    await s.flush();
    leaseKeeper(w.db).drop(run); // its process died
    expect(await markInterrupted(w.db, t0 + LEASE_TTL_MS + 1)).toBeGreaterThanOrEqual(1);
    const live = await stored(w.db);
    const scan = await scanned(w.db);
    expect(live.sigs[`${run}-n`]).toBe(scan.sigs[`${run}-n`]);
    expect(live.sigs[`${run}-n`]).toMatch(/^[0-9a-f]{16}$/);
    expect(live.nodeDaily).toEqual(scan.nodeDaily);
    expect(live.failureDaily).toEqual(scan.failureDaily);
    expect((await docs(run)).map((d) => d.field).sort()).toEqual(['error', 'input']);
  });
});
