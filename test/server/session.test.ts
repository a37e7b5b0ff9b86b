// The dashboard's server session (lib/server/session.ts) is one per process, kept across requests;
// closeServerSessionForTests ends it — its simulator, database and stop-signal handlers — and
// forgets it, so that the integration tests' shared process serves the next file's project
// (DESIGN: Tests).
import { afterAll, describe, expect, it } from 'vitest';
import type { SqliteDb } from '@/db/types';
import { closeServerSessionForTests, serverSession } from '@/lib/server/session';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase } from '../helpers/showcase';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
afterAll(async () => {
  await closeServerSessionForTests();
  restoreEnv();
});

describe('the server session', () => {
  it('is kept until closed; closed, so are its simulator and database, its signal handlers are gone, and the next one opens the project named then', async () => {
    const [a, b] = [copyShowcase(), copyShowcase()];
    process.env.AQVEN_SIMULATE = '1';
    delete process.env.AQVEN_DATABASE_URL;
    process.env.AQVEN_PROJECT = a;
    const listening = () => ['SIGINT', 'SIGTERM', 'exit'].map((e) => process.listenerCount(e));
    const before = listening();
    const first = await serverSession();
    expect(listening()).toEqual(before.map((n) => n + 1));
    expect(first.target.startsWith(a)).toBe(true);
    process.env.AQVEN_PROJECT = b;
    expect(await serverSession()).toBe(first);

    const simulator = first.simulated!.sim.url;
    await closeServerSessionForTests();
    expect((first.db as SqliteDb).$client.open).toBe(false);
    expect(listening()).toEqual(before);
    await expect(fetch(simulator)).rejects.toThrow();

    const next = await serverSession();
    expect(next).not.toBe(first);
    expect(next.target.startsWith(b)).toBe(true);
    // nothing open to close twice
    await closeServerSessionForTests();
    await closeServerSessionForTests();
  }, 60_000);
});
