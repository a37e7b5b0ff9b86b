// Never start a run twice (DESIGN: The dashboard, "Calling AQVEN from a service"): `Idempotency-Key`
// on `POST /api/runs` — the same caller, key and body get the same run and start nothing (not even
// a count against the runs per minute), concurrent duplicates included; the same key with another
// body is 422; a key that is too long is 400; keys are per caller; no key behaves as before. Then
// the key's rules against a clock (expiry, a claim whose request died, one still starting) and the
// purge, on both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '@/db/account-queries';
import { claimKey, setKeyRun, storedKey } from '@/db/idempotency-queries';
import { purgeRuns } from '@/db/purge';
import type { Db } from '@/db/types';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_TTL_MS } from '@/lib/contracts/idempotency-key';
import { CLAIM_STALE_MS, IN_FLIGHT_WAIT_MS, priorRequest, startFingerprint } from '@/lib/server/idempotent-start';
import { postRun } from '../helpers/api-call';
import { DIALECTS, withTestDb, type TestDb } from '../helpers/dialects';
import { runEnded } from '../helpers/run-ended';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let db: Db;
let session: Awaited<ReturnType<typeof dashboard.open>>['session'];
const TRIAGE = { flow: 'triage', input: { ticket: 'my invoice is wrong', lang: 'en' } };
const runIds = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).map((r) => r.id);

describe('Idempotency-Key on POST /api/runs (SQLite, the dashboard in this process)', () => {
  beforeAll(async () => {
    ({ session } = await dashboard.open({ scripts: { [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] } }));
    db = session.db;
  }, 90_000);
  afterAll(() => dashboard.close());

  it('two concurrent requests with one key start one run and both answer it; a retry gets it too and starts nothing', async () => {
    // the run lasts long enough for both to find it going: with an instant answer it could end before
    // the second request is answered, which then answers its record (200), as a later retry does
    session.simulated!.sim.loadScripts({ [FLASH_LITE]: [{ kind: 'ok', latency: { first_token_ms: 3_000 } }], [GPT_OSS]: [{ kind: 'ok' }] });
    const key = { 'idempotency-key': 'order-1' };
    const [a, b] = await Promise.all([postRun<{ id: string }>(TRIAGE, key), postRun<{ id: string }>(TRIAGE, key)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.id).toBe(a.body.id);
    expect(await runIds()).toEqual([a.body.id]);
    // one of the two found the other's run
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].sort()).toEqual([null, 'true']);

    await runEnded(db, a.body.id);
    // the same body however spaced and ordered: the run as it is now (ended: its record)
    const retry = await postRun<{ id: string; status: string }>('{ "input": {"lang":"en", "ticket": "my invoice is wrong"}, "flow": "triage" }', {
      'idempotency-key': '"order-1"',
    });
    expect(retry).toMatchObject({ status: 200, body: { id: a.body.id, status: 'succeeded' } });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('preference-applied')).toBeNull();
    expect(await runIds()).toEqual([a.body.id]);
  });

  it('the same key with another body is refused (422) and starts nothing; without a key every request starts a run', async () => {
    const other = await postRun({ ...TRIAGE, input: { ticket: 'another ticket' } }, { 'idempotency-key': 'order-1' });
    expect(other).toMatchObject({ status: 422, body: { code: 'E_IDEMPOTENCY_KEY_REUSED', error: expect.stringContaining('"order-1"') } });
    const before = (await runIds()).length;
    const [x, y] = await Promise.all([postRun<{ id: string }>(TRIAGE), postRun<{ id: string }>(TRIAGE)]);
    expect(x.body.id).not.toBe(y.body.id);
    expect((await runIds()).length).toBe(before + 2);
    await Promise.all([runEnded(db, x.body.id), runEnded(db, y.body.id)]);
  });

  it('refuses a key that is empty, too long or not ASCII (400 E_IDEMPOTENCY_KEY), before anything is counted or started', async () => {
    const before = (await runIds()).length;
    for (const k of ['', 'x'.repeat(IDEMPOTENCY_KEY_MAX + 1), 'clé']) {
      expect(await postRun(TRIAGE, { 'idempotency-key': k }), k.slice(0, 10)).toMatchObject({ status: 400, body: { code: 'E_IDEMPOTENCY_KEY' } });
    }
    expect((await postRun(TRIAGE, { 'idempotency-key': 'x'.repeat(IDEMPOTENCY_KEY_MAX) })).status).toBe(202);
    expect((await runIds()).length).toBe(before + 1);
  });

  it('a request that finds its run is no run start: the runs per minute do not refuse it', async () => {
    // a caller of its own, so no other test's starts count in its minute
    const bearer = { authorization: `Bearer ${(await createToken(db, { name: 'limited', role: 'editor', createdBy: null, expiresAt: null }, Date.now())).token}` };
    process.env.AQVEN_RUNS_PER_MINUTE = '1';
    try {
      const first = await postRun<{ id: string }>(TRIAGE, { ...bearer, 'idempotency-key': 'limit-1' });
      expect(first.status).toBe(202);
      for (let i = 0; i < 3; i++) expect(await postRun(TRIAGE, { ...bearer, 'idempotency-key': 'limit-1' })).toMatchObject({ body: { id: first.body.id } });
      expect(await postRun(TRIAGE, { ...bearer, 'idempotency-key': 'limit-2' })).toMatchObject({ status: 429, body: { code: 'E_LIMIT' } });
      // the refused start left no key behind: once the limit allows, the key starts its run
      expect(await storedKey(db, 'token:limited', 'limit-2')).toBeNull();
      await runEnded(db, first.body.id);
    } finally {
      delete process.env.AQVEN_RUNS_PER_MINUTE;
    }
  });

  it('a refused start gives its key back (the same key may start the run once the body is right); keys are per caller', async () => {
    const bad = await postRun({ flow: 'triage', input: { ticket: 3 } }, { 'idempotency-key': 'fix-me' });
    expect(bad).toMatchObject({ status: 400, body: { code: 'E_INPUT' } });
    expect(await storedKey(db, 'open:dashboard', 'fix-me')).toBeNull();
    const fixed = await postRun<{ id: string }>(TRIAGE, { 'idempotency-key': 'fix-me' });
    expect(fixed.status).toBe(202);

    const token = await createToken(db, { name: 'svc', role: 'editor', createdBy: null, expiresAt: null }, Date.now());
    const byToken = await postRun<{ id: string }>(TRIAGE, { 'idempotency-key': 'fix-me', authorization: `Bearer ${token.token}` });
    expect(byToken.status).toBe(202);
    expect(byToken.body.id).not.toBe(fixed.body.id);
    expect(await storedKey(db, 'token:svc', 'fix-me')).toMatchObject({ runId: byToken.body.id });
    await Promise.all([runEnded(db, fixed.body.id), runEnded(db, byToken.body.id)]);
  });
});

describe.each(DIALECTS)('the keys against a clock, and their purge (%s)', (dialect) => {
  let t: TestDb;
  withTestDb(dialect, (opened) => (t = opened));
  const T0 = Date.UTC(2026, 0, 10);
  const k = { caller: 'ana', key: 'k1', fingerprint: startFingerprint('triage', { a: 1 }) };
  const clock = (start: number) => {
    let now = start;
    return { now: () => now, sleep: async (ms: number) => void (now += ms) };
  };
  const insertRun = async (id: string, startedAt: number) =>
    t.db.q
      .insert(t.db.t.runs)
      .values({ id, project: 'showcase', flow: 'triage', status: 'succeeded', input: {}, startedAt, finishedAt: startedAt + 1 } as typeof t.db.t.runs.$inferInsert);

  it('one claim wins; a key with its run answers the run; another body is reused; after 24 h the key names nothing', async () => {
    expect(await claimKey(t.db, { ...k, now: T0 })).toBe(true);
    expect(await claimKey(t.db, { ...k, now: T0 + 1 })).toBe(false);
    await insertRun('run-1', T0);
    await setKeyRun(t.db, k.caller, k.key, 'run-1');
    expect(await priorRequest(t.db, k, clock(T0 + 1000))).toEqual({ kind: 'run', runId: 'run-1' });
    expect(await priorRequest(t.db, { ...k, fingerprint: startFingerprint('triage', { a: 2 }) }, clock(T0 + 1000))).toEqual({ kind: 'reused' });
    expect(startFingerprint('triage', { b: [1, { y: 2, x: 1 }], a: 1 })).toBe(startFingerprint('triage', { a: 1, b: [1, { x: 1, y: 2 }] }));
    expect(await priorRequest(t.db, k, clock(T0 + IDEMPOTENCY_TTL_MS - 1))).toEqual({ kind: 'run', runId: 'run-1' });
    expect(await priorRequest(t.db, k, clock(T0 + IDEMPOTENCY_TTL_MS))).toEqual({ kind: 'none' });
    expect(await storedKey(t.db, k.caller, k.key)).toBeNull();
  });

  it('a claim still starting its run is waited for, then 409; one left by a dead request is taken over', async () => {
    expect(await claimKey(t.db, { ...k, key: 'k2', now: T0 })).toBe(true);
    const c = clock(T0 + 10);
    expect(await priorRequest(t.db, { ...k, key: 'k2' }, c)).toEqual({ kind: 'in-flight' });
    expect(c.now()).toBe(T0 + 10 + IN_FLIGHT_WAIT_MS);
    expect(await priorRequest(t.db, { ...k, key: 'k2' }, clock(T0 + CLAIM_STALE_MS))).toEqual({ kind: 'none' });
    expect(await claimKey(t.db, { ...k, key: 'k2', now: T0 + CLAIM_STALE_MS })).toBe(true);
  });

  it('aqven runs purge deletes the keys created before its cutoff, and a purged run takes its keys along', async () => {
    const DAY = 86_400_000;
    await insertRun('old-run', T0 - 100 * DAY);
    await claimKey(t.db, { ...k, key: 'old', now: T0 - 100 * DAY - 5 });
    await setKeyRun(t.db, k.caller, 'old', 'old-run');
    await claimKey(t.db, { ...k, key: 'orphan', now: T0 - 95 * DAY });
    const dry = await purgeRuns(t.db, { cutoff: T0 - 90 * DAY, dryRun: true });
    expect(dry.deleted.idempotencyKeys).toBe(2);
    const res = await purgeRuns(t.db, { cutoff: T0 - 90 * DAY });
    expect(res.deleted).toMatchObject({ runs: 1, idempotencyKeys: 2 });
    expect(await storedKey(t.db, k.caller, 'old')).toBeNull();
    expect(await storedKey(t.db, k.caller, 'orphan')).toBeNull();
    expect(await storedKey(t.db, k.caller, 'k2')).not.toBeNull();
    // the foreign key: a run deleted by other means takes its keys with it
    await insertRun('run-2', T0);
    await claimKey(t.db, { ...k, key: 'k3', now: T0 });
    await setKeyRun(t.db, k.caller, 'k3', 'run-2');
    const { eq } = await import('drizzle-orm');
    await t.db.q.delete(t.db.t.runs).where(eq(t.db.t.runs.id, 'run-2'));
    expect(await storedKey(t.db, k.caller, 'k3')).toBeNull();
  });
});
