// Accounts and API tokens on both dialects: users better-auth can sign in, the last admin kept,
// passwords replaced with every session signed out, tokens stored only as their hash.
import { betterAuth } from 'better-auth';
import { verifyPassword } from 'better-auth/crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '../test/helpers/dialects';
import {
  AccountError,
  anyUser,
  createToken,
  createUser,
  findUserByName,
  hashToken,
  listTokens,
  listUsers,
  noteUserSeen,
  loginEmail,
  normalizeName,
  removeUser,
  revokeToken,
  setPassword,
  setTokenBudget,
  setUserBudget,
  DEFAULT_TOKEN_TTL_MS,
  TOKEN_PREFIX,
  TOKEN_USE_WRITE_MS,
  tokenCaller,
  USE_AFTER_EXPIRY_EVERY_MS,
} from './account-queries';
import { listAudit } from './audit-queries';
import { authDatabaseAdapter } from './auth-adapter';
import type { Db } from './types';

const PW = 'correct horse battery';
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

/** the code of the AccountError `p` rejects with */
async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AccountError);
  return (err as AccountError).code;
}

describe('names', () => {
  it('are trimmed and lowercased; letters, digits, ".", "_", "-", 1 to 64, starting with a letter or digit', () => {
    expect(normalizeName(' Ana.Smith ')).toBe('ana.smith');
    for (const ok of ['a', '0', 'ci-bot', 'x_y', 'a.b-c_d', 'a'.repeat(64)]) expect(normalizeName(ok)).toBe(ok);
    for (const bad of ['', ' ', '-a', '.a', '_a', 'a b', 'a/b', 'é', 'a'.repeat(65), 'a..b', 'a.', 'K\u212A', 'a@b']) {
      expect(() => normalizeName(bad), bad).toThrow(AccountError);
    }
    expect(() => normalizeName('Ana Smith')).toThrow('"Ana Smith" is not a valid name: use 1 to 64 lowercase letters, digits');
  });

  it('map to the login email better-auth signs in with', () => {
    expect(loginEmail('Ana')).toBe('ana@users.aqven.invalid');
  });
});

describe.each(DIALECTS)('accounts on %s', (dialect) => {
  let opened: TestDb;
  let db: Db;
  withTestDb(dialect, (t) => {
    opened = t;
    db = t.db;
  });

  it('no user at first; a user is stored as better-auth reads it, with a scrypt hash of the password', async () => {
    expect(await anyUser(db)).toBe(false);
    const ana = await createUser(db, { name: 'Ana', role: 'admin', password: PW }, T0);
    expect(ana).toMatchObject({ name: 'ana', role: 'admin', createdAt: new Date(T0) });
    expect(await anyUser(db)).toBe(true);

    const [user] = await db.q.select().from(db.t.users).where(eq(db.t.users.id, ana.id));
    expect(user).toEqual({
      id: ana.id,
      name: 'ana',
      email: 'ana@users.aqven.invalid',
      emailVerified: false,
      image: null,
      role: 'admin',
      createdAt: new Date(T0),
      updatedAt: new Date(T0),
      lastSeenAt: null,
      budgetUsdPerDay: null,
    });
    const accounts = await db.q.select().from(db.t.accounts).where(eq(db.t.accounts.userId, ana.id));
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ accountId: ana.id, providerId: 'credential', createdAt: new Date(T0) });
    expect(accounts[0]!.password).not.toContain(PW);
    expect(await verifyPassword({ hash: accounts[0]!.password!, password: PW })).toBe(true);
    expect(await verifyPassword({ hash: accounts[0]!.password!, password: `${PW}!` })).toBe(false);
    expect(await findUserByName(db, 'ANA')).toEqual(ana);
    expect(await findUserByName(db, 'nobody')).toBeNull();
    expect(await findUserByName(db, 'not a name')).toBeNull();
  });

  it('refuses a taken name, a bad name, an unknown role and a password out of 12..128 characters', async () => {
    await createUser(db, { name: 'taken', role: 'viewer', password: PW }, T0);
    expect(await codeOf(createUser(db, { name: 'Taken', role: 'editor', password: PW }, T0))).toBe('E_EXISTS');
    expect(await codeOf(createUser(db, { name: 'no way', role: 'viewer', password: PW }, T0))).toBe('E_NAME');
    expect(await codeOf(createUser(db, { name: 'ok', role: 'owner', password: PW }, T0))).toBe('E_ROLE');
    await expect(createUser(db, { name: 'ok', role: 'viewer', password: 'x'.repeat(11) }, T0)).rejects.toThrow('the password is too short: at least 12 characters, got 11');
    expect(await codeOf(createUser(db, { name: 'ok', role: 'viewer', password: 'x'.repeat(129) }, T0))).toBe('E_PASSWORD');
    expect(await findUserByName(db, 'ok')).toBeNull();
    await createUser(db, { name: 'ok', role: 'viewer', password: 'x'.repeat(128) }, T0);
  });

  it('lists users by name with when they were last seen (their newest session)', async () => {
    const bo = await createUser(db, { name: 'bo', role: 'editor', password: PW }, T0);
    const at = (ms: number) => new Date(T0 + ms);
    const session = (id: string, updated: number) => ({
      id,
      token: `tok-${id}`,
      userId: bo.id,
      expiresAt: at(86_400_000),
      createdAt: at(0),
      updatedAt: at(updated),
    });
    await db.q.insert(db.t.sessions).values([session('s1', 5_000), session('s2', 9_000)]);
    const listed = await listUsers(db);
    expect(listed.map((u) => u.name)).toEqual([...listed.map((u) => u.name)].sort());
    expect(listed.find((u) => u.name === 'bo')).toEqual({ ...bo, lastSeenAt: at(9_000), budgetUsdPerDay: null });
    expect(listed.find((u) => u.name === 'ana')).toMatchObject({ role: 'admin', lastSeenAt: null });
    // seen signing in or out (kept on the user row): the later of that and the newest session
    await noteUserSeen(db, 'BO', T0 + 12_000);
    expect((await listUsers(db)).find((u) => u.name === 'bo')!.lastSeenAt).toEqual(at(12_000));
    await noteUserSeen(db, 'bo', T0 + 1_000); // an earlier time never replaces a later one
    expect((await listUsers(db)).find((u) => u.name === 'bo')!.lastSeenAt).toEqual(at(12_000));
  });

  it('a password change signs the user out, and when they were last seen outlives the sessions it revoked', async () => {
    const di = await createUser(db, { name: 'di', role: 'viewer', password: PW }, T0);
    await db.q
      .insert(db.t.sessions)
      .values(
        [3_000, 7_000].map((ms, i) => ({ id: `di-${i}`, token: `di-${i}`, userId: di.id, expiresAt: new Date(T0 + 1e8), createdAt: new Date(T0), updatedAt: new Date(T0 + ms) })),
      );
    expect(await setPassword(db, 'di', 'a brand new secret', T0 + 8_000)).toEqual({ name: 'di', signedOut: 2 });
    expect((await listUsers(db)).find((u) => u.name === 'di')!.lastSeenAt).toEqual(new Date(T0 + 7_000));
  });

  it('a new password replaces the hash and signs the user out everywhere', async () => {
    const cy = await createUser(db, { name: 'cy', role: 'viewer', password: PW }, T0);
    await db.q
      .insert(db.t.sessions)
      .values(['a', 'b'].map((s) => ({ id: `cy-${s}`, token: `cy-${s}`, userId: cy.id, expiresAt: new Date(T0 + 1e8), createdAt: new Date(T0), updatedAt: new Date(T0) })));
    expect(await setPassword(db, 'CY', 'a brand new secret', T0 + 1)).toEqual({ name: 'cy', signedOut: 2 });
    const [account] = await db.q.select().from(db.t.accounts).where(eq(db.t.accounts.userId, cy.id));
    expect(await verifyPassword({ hash: account!.password!, password: 'a brand new secret' })).toBe(true);
    expect(await verifyPassword({ hash: account!.password!, password: PW })).toBe(false);
    expect(account!.updatedAt).toEqual(new Date(T0 + 1));
    expect(await db.q.select().from(db.t.sessions).where(eq(db.t.sessions.userId, cy.id))).toEqual([]);
    expect(await setPassword(db, 'cy', 'yet another secret', T0 + 2)).toEqual({ name: 'cy', signedOut: 0 });
    expect(await codeOf(setPassword(db, 'nobody', 'yet another secret', T0))).toBe('E_NOT_FOUND');
    expect(await codeOf(setPassword(db, 'cy', 'short', T0))).toBe('E_PASSWORD');
  });

  it("better-auth's email+password sign-in accepts the user, and no longer the old password once it is replaced", async () => {
    const auth = betterAuth({
      secret: 'a test secret of at least thirty-two characters',
      baseURL: 'http://127.0.0.1:3000',
      database: authDatabaseAdapter(db),
      emailAndPassword: { enabled: true },
      user: { additionalFields: { role: { type: 'string' } } },
      logger: { disabled: true },
    });
    const signIn = (password: string) => auth.api.signInEmail({ body: { email: loginEmail('Fay'), password } });
    await createUser(db, { name: 'fay', role: 'editor', password: PW }, Date.now());
    const signedIn = await signIn(PW);
    expect(signedIn.user).toMatchObject({ name: 'fay', role: 'editor' });
    await expect(signIn('not the password')).rejects.toThrow();
    expect(await setPassword(db, 'fay', 'the new password', Date.now())).toEqual({ name: 'fay', signedOut: 1 });
    await expect(signIn(PW)).rejects.toThrow();
    expect((await signIn('the new password')).user.name).toBe('fay');
  });

  it('removing a user removes their sessions and credential; the last admin stays while others remain, and the only user stays', async () => {
    const dee = await createUser(db, { name: 'dee', role: 'viewer', password: PW }, T0);
    await db.q.insert(db.t.sessions).values({ id: 'dee-1', token: 'dee-1', userId: dee.id, expiresAt: new Date(T0 + 1e8), createdAt: new Date(T0), updatedAt: new Date(T0) });
    expect(await removeUser(db, 'Dee')).toEqual({ name: 'dee', signedOut: 1 });
    expect(await findUserByName(db, 'dee')).toBeNull();
    expect(await db.q.select().from(db.t.sessions).where(eq(db.t.sessions.userId, dee.id))).toEqual([]);
    expect(await db.q.select().from(db.t.accounts).where(eq(db.t.accounts.userId, dee.id))).toEqual([]);
    expect(await codeOf(removeUser(db, 'dee'))).toBe('E_NOT_FOUND');

    // ana is the only admin and others remain
    await expect(removeUser(db, 'ana')).rejects.toThrow(/^ana is the last admin and \d+ other users remain: add another admin first$/);
    await createUser(db, { name: 'eve', role: 'admin', password: PW }, T0);
    expect(await removeUser(db, 'ana')).toMatchObject({ name: 'ana' });
    expect(await codeOf(removeUser(db, 'eve'))).toBe('E_LAST_ADMIN');
    for (const u of await listUsers(db)) if (u.name !== 'eve') await removeUser(db, u.name);
    // never the only user: with none, whatever reaches the dashboard from this machine (a reverse proxy too) would be admin
    await expect(removeUser(db, 'eve')).rejects.toMatchObject({
      code: 'E_LAST_USER',
      message: 'eve is the only user: without one the dashboard opens to this machine without sign-in; add another admin first',
    });
    expect(await anyUser(db)).toBe(true);
  });

  it('two admins removed at once: one of them stays', async () => {
    await createUser(db, { name: 'v', role: 'viewer', password: PW }, T0);
    // the admin the test before leaves (the only user stays) goes, so x1 and x2 are the only admins
    for (const name of ['x1', 'x2']) await createUser(db, { name, role: 'admin', password: PW }, T0);
    if (await findUserByName(db, 'eve')) await removeUser(db, 'eve');
    // PostgreSQL: another pool, so the two removals run on two connections at once
    const other = dialect === 'pg' ? otherProcess(opened) : { db, close: async () => undefined };
    try {
      for (let round = 0; round < 8; round++) {
        for (const name of ['x1', 'x2']) if (!(await findUserByName(db, name))) await createUser(db, { name, role: 'admin', password: PW }, T0);
        const results = await Promise.allSettled([removeUser(db, 'x1'), removeUser(other.db, 'x2')]);
        expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'E_LAST_ADMIN' });
        expect((await listUsers(db)).filter((u) => u.role === 'admin')).toHaveLength(1);
      }
    } finally {
      await other.close();
    }
  });
});

describe.each(DIALECTS)('API tokens on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (t) => {
    db = t.db;
  });

  it('a token is shown once, stored as its sha256, and names its caller until revoked', async () => {
    const { token, info } = await createToken(db, { name: 'CI', role: 'editor', createdBy: 'cli:ana' }, T0);
    expect(token).toMatch(/^aqven_[A-Za-z0-9_-]{43}$/);
    // 90 days unless said otherwise; no spend budget unless given
    expect(info).toEqual({
      name: 'ci',
      role: 'editor',
      createdBy: 'cli:ana',
      createdAt: T0,
      lastUsedAt: null,
      revokedAt: null,
      expiresAt: T0 + DEFAULT_TOKEN_TTL_MS,
      budgetUsdPerDay: null,
      scope: null,
    });
    const rows = await db.q.select().from(db.t.apiTokens);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(hashToken(token));
    expect(rows[0]!.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(token.slice(TOKEN_PREFIX.length));

    const caller = await tokenCaller(db, token, T0 + 1_000);
    expect(caller).toEqual({ id: rows[0]!.id, name: 'ci', role: 'editor', scope: null });
    expect(await tokenCaller(db, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, T0)).toBeNull();
    expect(await tokenCaller(db, 'Bearer nonsense', T0)).toBeNull();
    expect(await tokenCaller(db, '', T0)).toBeNull();

    expect(await listTokens(db)).toEqual([{ ...info, lastUsedAt: T0 + 1_000 }]);
    expect(await revokeToken(db, 'ci', T0 + 5_000)).toEqual({ name: 'ci', revokedAt: T0 + 5_000, already: false });
    expect(await tokenCaller(db, token, T0 + 6_000)).toBeNull();
    expect(await revokeToken(db, 'ci', T0 + 9_000)).toEqual({ name: 'ci', revokedAt: T0 + 5_000, already: true });
    expect(await codeOf(revokeToken(db, 'nope', T0))).toBe('E_NOT_FOUND');
    expect(await codeOf(createToken(db, { name: 'ci', role: 'editor', createdBy: null }, T0))).toBe('E_EXISTS');
    expect(await codeOf(createToken(db, { name: 'ci two', role: 'editor', createdBy: null }, T0))).toBe('E_NAME');
    expect(await codeOf(createToken(db, { name: 'ci2', role: 'root', createdBy: null }, T0))).toBe('E_ROLE');
  });

  it('writes the last use at most once a minute', async () => {
    const { token } = await createToken(db, { name: 'busy', role: 'viewer', createdBy: null }, T0 + 1);
    const lastUsed = async () => (await listTokens(db)).find((t) => t.name === 'busy')!.lastUsedAt;
    await tokenCaller(db, token, T0 + 10);
    expect(await lastUsed()).toBe(T0 + 10);
    await Promise.all([tokenCaller(db, token, T0 + 20), tokenCaller(db, token, T0 + TOKEN_USE_WRITE_MS - 1)]);
    expect(await lastUsed()).toBe(T0 + 10);
    await tokenCaller(db, token, T0 + 10 + TOKEN_USE_WRITE_MS);
    expect(await lastUsed()).toBe(T0 + 10 + TOKEN_USE_WRITE_MS);
    expect((await listTokens(db)).map((t) => t.name)).toEqual(['ci', 'busy']);
  });

  it('refuses a token past its expiry, and records its use after expiry once a day, not on every request', async () => {
    const { token, info } = await createToken(db, { name: 'temp', role: 'editor', createdBy: null, expiresAt: T0 + 3_600_000, budgetUsdPerDay: 5 }, T0);
    expect(info).toMatchObject({ expiresAt: T0 + 3_600_000, budgetUsdPerDay: 5 });
    expect(await tokenCaller(db, token, T0 + 3_600_000 - 1)).toMatchObject({ name: 'temp' });
    expect(await tokenCaller(db, token, T0 + 3_600_000)).toBeNull();
    expect(await tokenCaller(db, token, T0 + 3_700_000, '203.0.113.9')).toBeNull();
    expect(await tokenCaller(db, token, T0 + 3_600_000 + USE_AFTER_EXPIRY_EVERY_MS)).toBeNull();
    const used = await listAudit(db, { kind: 'token.used-after-expiry' });
    expect(used.rows.map((r) => [r.actor, r.target, r.at])).toEqual([
      ['token:temp', 'token:temp', T0 + 3_600_000 + USE_AFTER_EXPIRY_EVERY_MS],
      ['token:temp', 'token:temp', T0 + 3_600_000],
    ]);
    expect(used.rows[1]!.detail).toEqual({ expiredAt: new Date(T0 + 3_600_000).toISOString() });
    // never only when asked for; an expiry not after its creation is refused
    const forever = await createToken(db, { name: 'forever', role: 'viewer', createdBy: null, expiresAt: null }, T0);
    expect(await tokenCaller(db, forever.token, T0 + 100 * 365 * 86_400_000)).toMatchObject({ name: 'forever' });
    await expect(createToken(db, { name: 'past', role: 'viewer', createdBy: null, expiresAt: T0 }, T0)).rejects.toThrow(RangeError);
    // a token's and a user's budget are set (and removed) by name
    expect(await setTokenBudget(db, 'TEMP', 2.5)).toEqual({ name: 'temp', budgetUsdPerDay: 2.5 });
    expect(await setTokenBudget(db, 'temp', null)).toEqual({ name: 'temp', budgetUsdPerDay: null });
    expect(await codeOf(setTokenBudget(db, 'nope', 1))).toBe('E_NOT_FOUND');
    expect(await codeOf(setUserBudget(db, 'nobody', 1))).toBe('E_NOT_FOUND');
  });
});
