// The sign-in limits in detail (DESIGN: The dashboard, "Accounts, roles and tokens", sign-in
// limits), without password checks: what an address is counted under, that only failures count
// (a success gives its counts back), that a refusal leaves the other limits untouched, that racing
// attempts cannot all pass one check, and how long a known address is remembered. The clock is
// injected; test/api/sign-in-action.test.ts drives the same rules through the form.
import { beforeEach, describe, expect, it } from 'vitest';
import { MEMO_MS } from '@/db/request-limits';
import type { Db } from '@/db/types';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '@/test/helpers/dialects';
import { addressKey, signInFailuresPerMinute, signInLimit, signInSucceeded, signInUnchecked, type SignInAttempt } from '@/lib/server/limits';

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const ENV = {}; // the default rate over the database

describe('addressKey', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5'],
    [' 203.0.113.5 ', '203.0.113.5'],
    ['::ffff:203.0.113.5', '203.0.113.5'],
    ['::ffff:cb00:7105', '203.0.113.5'],
    ['[::FFFF:203.0.113.5]', '203.0.113.5'],
    ['0:0:0:0:0:ffff:cb00:7105', '203.0.113.5'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:fffe', '2001:db8:1:2::/64'],
    ['[2001:db8:1:2:3:4:5:6]', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:0:0:1::', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['64:ff9b::198.51.100.1', '64:ff9b:0:0::/64'],
    ['::ffff:1:203.0.113.5', '0:0:0:0::/64'], // not mapped: a mapped address has ffff in the sixth group only
  ])('%s → %s', (peer, key) => {
    expect(addressKey(peer)).toBe(key);
  });

  it('an unknown address is one key of its own; something not an address is kept as sent (cut at 64 characters)', () => {
    expect(addressKey(null)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
    expect(addressKey('proxy.internal')).toBe('proxy.internal');
    expect(addressKey('x'.repeat(100))).toBe('x'.repeat(64));
  });
});

describe('signInFailuresPerMinute', () => {
  it('is 120 unless AQVEN_SIGN_IN_FAILURES_PER_MINUTE says otherwise, a whole number ≥ 1', () => {
    expect(signInFailuresPerMinute({})).toBe(120);
    expect(signInFailuresPerMinute({ AQVEN_SIGN_IN_FAILURES_PER_MINUTE: ' 40 ' })).toBe(40);
    for (const bad of ['0', '-1', '2.5', 'many']) expect(() => signInFailuresPerMinute({ AQVEN_SIGN_IN_FAILURES_PER_MINUTE: bad })).toThrow(/AQVEN_SIGN_IN_FAILURES_PER_MINUTE/);
  });
});

describe.each(DIALECTS)('signInLimit on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });
  beforeEach(async () => {
    await db.q.delete(db.t.requestLimits);
  });

  const attempt = async (name: string, peer: string | null, now: number, env = ENV) => {
    const r = await signInLimit(db, name, peer, now, env);
    return 'error' in r ? r.error : r;
  };
  /** `n` attempts that fail (their counts kept), each let through */
  const failures = async (name: string, peer: string, n: number, now: number, env = ENV) => {
    for (let i = 0; i < n; i++) expect(await attempt(name, peer, now, env)).toMatchObject({ name });
  };
  const count = async (key: string) => (await db.q.select().from(db.t.requestLimits)).find((r) => r.key === key)?.count ?? 0;

  it('only failures count: a success gives its counts back, so signing in again and again never locks anyone', async () => {
    for (let i = 0; i < 40; i++) {
      const a = (await attempt(i % 2 ? 'ana' : 'bo', '192.0.2.1', T0 + i)) as SignInAttempt;
      await signInSucceeded(db, a, T0 + i);
    }
    expect(await count('login:addr:192.0.2.1')).toBe(0);
    await failures('cy', '192.0.2.1', 10, T0 + 100);
    expect(await attempt('cy', '192.0.2.1', T0 + 101)).toBe('too many failed sign-ins from this address for this account; try again in 15 min');
    // a check the database could not make is no failure either
    const a = (await attempt('ana', '192.0.2.2', T0)) as SignInAttempt;
    await signInUnchecked(db, a);
    expect(await count('login:acct:ana@192.0.2.2')).toBe(0);
    expect(await count('login:all')).toBe(10); // cy's failures only
  });

  it('the address allows 30 failures in 15 min over every account; its refusal counts nothing else', async () => {
    for (let i = 0; i < 30; i++) await failures(`n${i}`, '198.51.100.9', 1, T0);
    expect(await attempt('ana', '198.51.100.9', T0 + 5 * MINUTE)).toBe('too many failed sign-ins from this address; try again in 10 min');
    expect(await count('login:acct:ana@198.51.100.9')).toBe(0);
    expect(await count('login:all')).toBe(30);
    expect(await attempt('ana', '198.51.100.9', T0 + 15 * MINUTE)).toMatchObject({ name: 'ana' });
  });

  it('a refusal by the rate over the database gives back the address and account counts it took', async () => {
    const env = { AQVEN_SIGN_IN_FAILURES_PER_MINUTE: '3' };
    for (let i = 0; i < 3; i++) await failures('ana', `203.0.113.${i}`, 1, T0, env);
    for (let i = 0; i < 5; i++) expect(await attempt('bo', '203.0.113.99', T0 + 1000, env)).toBe('too many failed sign-ins on this dashboard; try again in 59 s');
    expect(await count('login:addr:203.0.113.99')).toBe(0);
    expect(await count('login:acct:bo@203.0.113.99')).toBe(0);
    expect(await attempt('bo', '203.0.113.99', T0 + MINUTE, env)).toMatchObject({ name: 'bo' });
  });

  it('attempts racing from several processes cannot all pass one check: each is counted before its password is', async () => {
    const others = [otherProcess(t), otherProcess(t)];
    try {
      const dbs = [db, ...others.map((o) => o.db)];
      const verdicts = await Promise.all(Array.from({ length: 25 }, (_, i) => signInLimit(dbs[i % dbs.length]!, 'ana', '192.0.2.77', T0, ENV)));
      expect(verdicts.filter((v) => !('error' in v))).toHaveLength(10);
      expect(await count('login:all')).toBe(10);
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });

  it('an address the account signed in from passes the account lock and the rate over the database for 90 days, not the address limit', async () => {
    await signInSucceeded(db, (await attempt('ana', '2001:db8:5:6::1', T0)) as SignInAttempt, T0);
    const env = { AQVEN_SIGN_IN_FAILURES_PER_MINUTE: '1' };
    await failures('bo', '198.51.100.1', 1, T0 + 1, env); // the database's rate is used up
    // a known address: its /64
    await failures('ana', '2001:db8:5:6::99', 30, T0 + 2, env);
    expect(await count('login:acct:ana@2001:db8:5:6::/64')).toBe(0);
    expect(await attempt('ana', '2001:db8:5:6::1', T0 + 3, env)).toBe('too many failed sign-ins from this address; try again in 15 min');
    // another account at that address is not known there
    expect(await attempt('bo', '2001:db8:5:7::1', T0 + 4, env)).toMatch(/on this dashboard/);
    // forgotten after 90 days without a sign-in from there
    const later = T0 + MEMO_MS;
    await failures('ana', '2001:db8:5:6::1', 10, later);
    expect(await attempt('ana', '2001:db8:5:6::1', later)).toMatch(/for this account/);
  });
});
