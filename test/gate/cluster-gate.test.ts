// The cluster gate's store side against a real PostgreSQL (db/cluster-gate.ts; DESIGN: Transport
// retry and rate limits, "One gate across the cluster"): two "processes" in one test — each its
// own pool, its own listener and its own owner id — over one database. The claim's times are
// passed in (no waiting); the notice latencies are measured on the wall clock.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { announcePauseChange, clusterGate, createClusterGate, PROBE_CLAIM_TTL_MS, type ClusterGate } from '@/db/cluster-gate';
import { clearPause } from '@/db/pause-queries';
import { runStore, type RunStore } from '@/db/run-store';
import type { PgDb } from '@/db/types';
import { openTestDb, otherProcess, type TestDb } from '../helpers/dialects';
import { until } from '../helpers/until';

let t: TestDb;
let other: { db: PgDb; close(): Promise<void> };
let db: PgDb;
let gA: ClusterGate;
let gB: ClusterGate;
let storeA: RunStore;
let storeB: RunStore;
const extra: ClusterGate[] = [];

beforeAll(async () => {
  t = await openTestDb('pg');
  const o = otherProcess(t);
  if (t.db.dialect !== 'pg' || o.db.dialect !== 'pg') throw new Error('PostgreSQL only');
  other = { db: o.db, close: o.close };
  db = t.db;
  // made before the run stores make them, so the owners count
  gA = clusterGate(t.db, { owner: 'A' });
  gB = clusterGate(other.db, { owner: 'B' });
  storeA = runStore(t.db);
  storeB = runStore(other.db);
  await Promise.all([gA.listening(), gB.listening(), gA.ready(), gB.ready()]);
}, 60_000);

afterAll(async () => {
  for (const g of extra) await g.stop();
  await gA?.stop();
  await gB?.stop();
  await other?.close();
  await t?.close();
});

let n = 0;
const fresh = () => `p:model-${++n}`;
/** the model's stored row, or undefined */
const row = async (model: string) => {
  const { rateLimitPauses: p } = t.db.t;
  const rows = await t.db.q.select({ until: p.pausedUntil, owner: p.probeOwner, probeUntil: p.probeUntil }).from(p).where(eq(p.model, model));
  return rows[0];
};
/** resolves with the ms until `g` hears of a change of `model` */
const heard = (g: ClusterGate, model: string, from: number) =>
  new Promise<number>((resolve) => {
    const off = g.watch(model, () => {
      off();
      resolve(performance.now() - from);
    });
  });
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { n: s.length, median: at(0.5), p90: at(0.9), max: at(1) };
};

describe('pauses across processes', () => {
  it('a pause committed in one process is known in the other by its notice (measured), and by the poll without one', async () => {
    const notice: number[] = [];
    for (let i = 0; i < 30; i++) {
      const model = fresh();
      const t0 = performance.now();
      const p = heard(gB, model, t0);
      storeA.setPause(model, Date.now() + 60_000, `HTTP 429 from ${model}`);
      notice.push(await p);
    }
    // a third process that only polls (listen: false), as with a pooler that does not pass LISTEN on
    const poller = createClusterGate(other.db, { owner: 'C', listen: false });
    extra.push(poller);
    await poller.ready();
    const polled: number[] = [];
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, Math.random() * 1000)); // at any phase of the poll
      const model = fresh();
      const t0 = performance.now();
      const p = heard(poller, model, t0);
      storeA.setPause(model, Date.now() + 60_000, `HTTP 429 from ${model}`);
      polled.push(await p);
    }
    const m = { notify: stats(notice), poll: stats(polled) };
    console.log(`cluster gate, pause set → known in another process (ms): ${JSON.stringify(m)}`);
    expect(m.notify.p90).toBeLessThan(250); // generous (a loaded machine): the numbers are in the log and in DESIGN
    expect(m.poll.max).toBeLessThan(1000 + 250);
    expect(gB.get(`p:model-${n}`)).not.toBeNull();
  }, 30_000);

  it('a later pause wins; clearing on /providers deletes the row and every process forgets it', async () => {
    const model = fresh();
    const now = Date.now();
    storeA.setPause(model, now + 60_000, '429');
    storeB.setPause(model, now + 30_000, '429 earlier'); // an earlier one changes nothing
    await until('the pause in B', () => gB.get(model) === now + 60_000);
    await storeB.flush();
    expect(await row(model)).toMatchObject({ until: now + 60_000 });
    expect(await clearPause(t.db, model)).toBe(true);
    await announcePauseChange(t.db, model);
    await until('B forgets the pause', () => gB.get(model) === null);
    await until('A forgets the pause', () => gA.get(model) === null);
    expect(storeB.getPause(model)).toBeNull();
  });
});

describe('the probe after a pause, claimed cluster-wide', () => {
  /** a stored pause that ends at `end`, known to both processes */
  const paused = async (end: number) => {
    const model = fresh();
    storeA.setPause(model, end, `HTTP 429 from ${model}`);
    await until('the pause in both', () => gA.get(model) === end && gB.get(model) === end);
    await until('the row', async () => (await row(model)) !== undefined);
    return model;
  };

  it('one process wins; the others wait for its answer or for its claim to lapse', async () => {
    const end = Date.now() + 60_000;
    const model = await paused(end);
    // not before the pause is over
    expect(await gB.claimProbe(model, end - 1)).toEqual({ kind: 'taken', retryAt: end });
    expect(await gB.claimProbe(model, end)).toEqual({ kind: 'won' });
    expect(await row(model)).toMatchObject({ owner: 'B', probeUntil: end + PROBE_CLAIM_TTL_MS });
    // A loses while B's claim holds, and is told when to ask again
    expect(await gA.claimProbe(model, end + 5)).toEqual({ kind: 'taken', retryAt: end + PROBE_CLAIM_TTL_MS + 1 });
    // B's probe came back without a 429: the row goes, A hears it, and nothing is left to probe
    const gone = heard(gA, model, performance.now());
    gB.probeDone(model, 'ok');
    await gone;
    expect(gA.get(model)).toBeNull();
    expect(await row(model)).toBeUndefined();
    expect(await gA.claimProbe(model, end + 10)).toEqual({ kind: 'none' });
  });

  it('a claim not renewed lapses: another process wins it then, and the dead one cannot end it', async () => {
    const end = Date.now() + 60_000;
    const model = await paused(end);
    expect(await gB.claimProbe(model, end)).toEqual({ kind: 'won' });
    expect(await gA.claimProbe(model, end + PROBE_CLAIM_TTL_MS)).toMatchObject({ kind: 'taken' });
    expect(await gA.claimProbe(model, end + PROBE_CLAIM_TTL_MS + 1)).toEqual({ kind: 'won' });
    gB.probeDone(model, 'ok'); // late: the claim is A's now
    await new Promise((r) => setTimeout(r, 50));
    expect(await row(model)).toMatchObject({ owner: 'A' });
    gA.probeDone(model, 'ok');
    await until('the row gone', async () => (await row(model)) === undefined);
  });

  it('a probe that got a 429 sets a new pause, which frees the claim; one never sent hands the claim back', async () => {
    const end = Date.now() + 60_000;
    const model = await paused(end);
    expect(await gB.claimProbe(model, end)).toEqual({ kind: 'won' });
    storeB.setPause(model, end + 2000, `HTTP 429 from ${model}`);
    gB.probeDone(model, 'rate_limited');
    await until('A hears of the new pause', () => gA.get(model) === end + 2000);
    expect(await row(model)).toMatchObject({ until: end + 2000, owner: null, probeUntil: null });
    expect(await gA.claimProbe(model, end + 2000)).toEqual({ kind: 'won' });
    const handedBack = heard(gB, model, performance.now());
    gA.probeDone(model, 'not_sent');
    await handedBack;
    expect(await row(model)).toMatchObject({ until: end + 2000, owner: null });
    expect(await gB.claimProbe(model, end + 2001)).toEqual({ kind: 'won' });
    gB.probeDone(model, 'ok');
    await until('the row gone', async () => (await row(model)) === undefined);
  });
});

describe('the listener', () => {
  it('reconnects when its connection is cut, says so once, and hears notices again', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    // a listener whose poll would not make up for lost notices within the test
    const g = createClusterGate(other.db, { owner: 'D', pollMs: 60_000 });
    extra.push(g);
    await g.listening();
    const pids = await db.pool.query<{ pid: number }>("SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity WHERE query = 'LISTEN aqven_pause' AND pid <> pg_backend_pid()");
    expect(pids.rowCount).toBeGreaterThan(0);
    await until('the listeners back', async () => {
      const r = await db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN aqven_pause'");
      return (r.rows[0] as { n: number }).n >= pids.rowCount!;
    });
    const model = fresh();
    const p = heard(g, model, performance.now());
    storeA.setPause(model, Date.now() + 60_000, '429');
    const ms = await p;
    expect(ms).toBeLessThan(1000);
    expect(errors.mock.calls.filter(([m]) => String(m).includes('rate-limit listener lost')).length).toBeGreaterThan(0);
    errors.mockRestore();
  }, 20_000);
});
