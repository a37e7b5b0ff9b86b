// The sign-in form as callers meet it (DESIGN: The dashboard, "Accounts, roles and tokens", sign-in
// limits): the account's lock is kept per address, so nobody elsewhere can lock a user out, and an
// address that signed in to the account before passes it; IPv6 addresses count by /64; a malformed
// name is refused before anything is counted; all failures together are held to a rate per
// database. The clock is virtual (Date only); the password checks are real (better-auth's scrypt,
// 0.1-0.2 s each, so the counting in detail is test/server/limits.test.ts's).
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createUser } from '@/db/account-queries';
import type { Db } from '@/db/types';
import type { SignInState } from '@/lib/forms/auth';
import { SIGN_IN_ADDRESS_UNKNOWN } from '@/lib/server/limits';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase } from '../helpers/showcase';
import { request as req } from '../helpers/next-headers';

/** the request: from this machine, with the client address the trusted proxy saw (`x-test-peer`) */
req.headers = { host: 'localhost' };
/** the actions that went as far as better-auth */
const better = vi.hoisted(() => ({ passwordChecks: 0 }));
// lib/server/access.ts decides which address to trust; here the test names it
vi.mock('@/lib/server/access', async (original) => ({
  ...(await original<typeof import('@/lib/server/access')>()),
  peerAddress: (h: Headers) => h.get('x-test-peer'),
}));
// counts the actions that went as far as better-auth (the password check)
vi.mock('@/lib/server/auth', async (original) => {
  const auth = await original<typeof import('@/lib/server/auth')>();
  return { ...auth, authFor: (...args: Parameters<typeof auth.authFor>) => (better.passwordChecks++, auth.authFor(...args)) };
});

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL', 'AQVEN_SIGN_IN_FAILURES_PER_MINUTE']);
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const PASSWORD = 'the admin password, long enough';
let db: Db;
let clock = T0;

const session = async () => (await import('@/lib/server/session')).serverSession();
const IDLE: SignInState = {};
/** signs in as `name` from `peer` (null: the address is unknown) at the virtual `clock` */
const signIn = async (name: string, password: string, peer: string | null) => {
  const { follow } = await import('../helpers/next-navigation');
  req.headers = peer ? { host: 'localhost', 'x-test-peer': peer } : { host: 'localhost' };
  vi.setSystemTime(clock);
  const fd = new FormData();
  fd.set('name', name);
  fd.set('password', password);
  return follow(async () => (await import('@/lib/actions/auth')).signInAction(IDLE, fd));
};
const IN = { redirect: '/runs' };
const WRONG = { error: 'wrong name or password' };
const LOCKED = { error: expect.stringMatching(/^too many failed sign-ins from this address for this account; try again in \d+ min$/) };
const fail = async (name: string, peer: string | null, times: number) => {
  for (let i = 0; i < times; i++) expect(await signIn(name, 'not the password at all', peer)).toEqual(WRONG);
};
const rows = async () => db.q.select().from(db.t.requestLimits);

beforeAll(async () => {
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  delete process.env.AQVEN_DATABASE_URL;
  delete process.env.AQVEN_SIGN_IN_FAILURES_PER_MINUTE;
  db = (await session()).db;
  await createUser(db, { name: 'admin', role: 'admin', password: PASSWORD }, T0);
  await createUser(db, { name: 'vera', role: 'viewer', password: PASSWORD }, T0);
  vi.useFakeTimers({ toFake: ['Date'] });
}, 90_000);

beforeEach(async () => {
  await db.q.delete(db.t.requestLimits);
  clock += 24 * 60 * MINUTE;
  delete process.env.AQVEN_SIGN_IN_FAILURES_PER_MINUTE;
});

afterAll(async () => {
  vi.useRealTimers();
  await (await session()).close();
  restoreEnv();
});

describe('sign-in limits', () => {
  it('failures from one address lock the account there only: the user signs in from elsewhere, and there once the window ends', async () => {
    await fail('admin', '203.0.113.66', 10);
    expect(await signIn('admin', PASSWORD, '203.0.113.66')).toEqual(LOCKED);
    expect(await signIn('admin', PASSWORD, '198.51.100.7')).toEqual(IN);
    // the lock is the account's at that address: other accounts are still tried from there
    expect(await signIn('vera', PASSWORD, '203.0.113.66')).toEqual(IN);
    clock += 15 * MINUTE;
    expect(await signIn('admin', PASSWORD, '203.0.113.66')).toEqual(IN);
  }, 60_000);

  it('an address the account signed in from before passes its lock (someone sharing it cannot lock the user out)', async () => {
    expect(await signIn('admin', PASSWORD, '192.0.2.10')).toEqual(IN);
    clock += 60 * MINUTE;
    await fail('admin', '192.0.2.10', 10);
    expect(await signIn('admin', PASSWORD, '192.0.2.10')).toEqual(IN);
  }, 60_000);

  it("IPv6 addresses count by their /64: walking through one's own block buys no new allowance", async () => {
    for (let i = 1; i <= 10; i++) expect(await signIn('admin', 'not the password at all', `2001:db8:1:2::${i.toString(16)}`)).toEqual(WRONG);
    expect(await signIn('admin', PASSWORD, '2001:db8:1:2:ffff:ffff:ffff:fffe')).toEqual(LOCKED);
    expect(await signIn('admin', PASSWORD, '2001:db8:1:3::1')).toEqual(IN);
  }, 60_000);

  it('a malformed name is refused with the same words before anything is counted', async () => {
    const checks = better.passwordChecks;
    for (const name of ['a..b', 'x'.repeat(65), '../etc/passwd', 'ädmin', 'admin.', '-admin', 'ad min']) {
      expect(await signIn(name, 'some password or other', '192.0.2.30')).toEqual(WRONG);
    }
    expect(await rows()).toEqual([]);
    expect(better.passwordChecks).toBe(checks);
    // a well-formed name is trimmed and lowercased as the form always did
    expect(await signIn('  Admin ', PASSWORD, '192.0.2.30')).toEqual(IN);
    expect(await signIn('', PASSWORD, '192.0.2.30')).toEqual({ error: 'enter your name and password' });
  }, 60_000);

  it('all failures together are held to a rate per database (AQVEN_SIGN_IN_FAILURES_PER_MINUTE); a known address still signs in', async () => {
    expect(await signIn('vera', PASSWORD, '192.0.2.40')).toEqual(IN);
    process.env.AQVEN_SIGN_IN_FAILURES_PER_MINUTE = '4';
    for (let i = 0; i < 4; i++) expect(await signIn(`nobody${i}`, 'wrong password here', `198.51.100.${i + 1}`)).toEqual(WRONG);
    const busy = { error: expect.stringMatching(/^too many failed sign-ins on this dashboard; try again in \d+ s$/) };
    expect(await signIn('somebody', 'wrong password here', '198.51.100.50')).toEqual(busy);
    expect(await signIn('admin', PASSWORD, '198.51.100.51')).toEqual(busy);
    expect(await signIn('vera', PASSWORD, '192.0.2.40')).toEqual(IN);
    clock += MINUTE;
    expect(await signIn('admin', PASSWORD, '198.51.100.51')).toEqual(IN);
  }, 60_000);

  it('an address the dashboard cannot tell is refused before anything is counted or checked: no shared allowance to use up', async () => {
    const before = better.passwordChecks;
    const counted = (await rows()).length;
    for (const name of ['vera', 'admin']) {
      expect(await signIn(name, PASSWORD, null)).toEqual({ error: SIGN_IN_ADDRESS_UNKNOWN });
    }
    expect(better.passwordChecks).toBe(before);
    expect((await rows()).length).toBe(counted);
    expect(await signIn('admin', PASSWORD, '192.0.2.50')).toEqual(IN);
  }, 60_000);
});
