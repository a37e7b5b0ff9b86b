// Sessions as a reader of the database meets them (DESIGN: The dashboard, Sessions), on both
// dialects: `sessions.token` holds the sha256 of the cookie's token, never the token, so a stolen
// row signs nobody in — not even as a cookie signed with the right key —, while sign-in, the daily
// refresh, sign-out and every revocation go on working; in PostgreSQL mode the signing key comes
// from AQVEN_AUTH_SECRET only, never from the database.
import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, hashToken, loginEmail, removeUser, setPassword } from '@/db/account-queries';
import type { Db } from '@/db/types';
import { DIALECTS, otherProcess, withTestDb, type TestDb } from '@/test/helpers/dialects';
import { saveEnv } from '@/test/helpers/saved-env';
import { authFor, SESSION_COOKIE, SESSION_TTL_S, sessionUser } from '@/lib/server/auth';

const SECRET = 'a test key of at least thirty-two characters, 0123456789';
const PW = 'correct horse battery staple';
const DAY_MS = 24 * 60 * 60 * 1000;

const restoreEnv = saveEnv(['AQVEN_AUTH_SECRET', 'AQVEN_PUBLIC_URL']);
beforeAll(() => {
  // sessionUser reads process.env, as the dashboard does
  process.env.AQVEN_AUTH_SECRET = SECRET;
  delete process.env.AQVEN_PUBLIC_URL;
});
afterAll(restoreEnv);

/** `token` as the session cookie carries it: signed with `secret` (HMAC-SHA256, base64), URL-encoded */
const signed = (token: string, secret = SECRET) => encodeURIComponent(`${token}.${createHmac('sha256', secret).update(token).digest('base64')}`);
const cookieHeaders = (value: string) => new Headers({ cookie: `${SESSION_COOKIE}=${value}` });
/** the session cookie's value in a response's Set-Cookie, or undefined */
const setCookie = (h: Headers) =>
  h
    .getSetCookie()
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`))
    ?.split(';')[0]!
    .slice(SESSION_COOKIE.length + 1);

describe.each(DIALECTS)('session tokens on %s', (dialect) => {
  let t: TestDb;
  let db: Db;
  withTestDb(dialect, (opened) => {
    t = opened;
    db = opened.db;
  });
  const auth = () => authFor(db, { AQVEN_AUTH_SECRET: SECRET });
  const rowsOf = async (userId: string) => db.q.select().from(db.t.sessions).where(eq(db.t.sessions.userId, userId));
  /** signs `name` in as the login form does; the cookie's value and the token in it */
  const signIn = async (name: string, password = PW) => {
    const res = await (await auth()).api.signInEmail({ body: { email: loginEmail(name), password, rememberMe: true }, headers: new Headers(), returnHeaders: true });
    const cookie = setCookie(res.headers)!;
    return { cookie, token: res.response.token, userId: res.response.user.id };
  };

  it("the row keeps the sha256 of the cookie's token, never the token; the cookie signs in, the row's value does not", async () => {
    await createUser(db, { name: 'ana', role: 'editor', password: PW }, Date.now());
    const { cookie, token, userId } = await signIn('ana');
    // the cookie carries the token itself, signed with the key (so signing by hand below is the same signing)
    expect(cookie).toBe(signed(token));
    const [row] = await rowsOf(userId);
    expect(row!.token).toBe(hashToken(token));
    expect(row!.token).not.toContain(token);
    expect(await sessionUser(db, cookieHeaders(cookie))).toMatchObject({ name: 'ana', role: 'editor', sessionId: row!.id });

    // a stolen row: its token value, even signed with the right key, is nobody's cookie
    expect(await sessionUser(db, cookieHeaders(signed(row!.token)))).toBeNull();
    // nor did the attempt touch the row
    expect(await rowsOf(userId)).toEqual([row]);
  });

  it("the daily refresh finds the row by the token's hash, keeps only the hash, and sets the cookie with the token", async () => {
    await createUser(db, { name: 'bo', role: 'viewer', password: PW }, Date.now());
    const { cookie, token, userId } = await signIn('bo');
    // as if signed in two days ago: due for its refresh
    const old = new Date(Date.now() + SESSION_TTL_S * 1000 - 2 * DAY_MS);
    await db.q
      .update(db.t.sessions)
      .set({ expiresAt: old, updatedAt: new Date(Date.now() - 2 * DAY_MS) })
      .where(eq(db.t.sessions.userId, userId));
    const res = await (await auth()).api.getSession({ headers: cookieHeaders(cookie), returnHeaders: true });
    expect(res.response?.user.name).toBe('bo');
    expect(setCookie(res.headers)).toBe(signed(token));
    const [row] = await rowsOf(userId);
    expect(row!.token).toBe(hashToken(token));
    expect(row!.expiresAt.getTime()).toBeGreaterThan(old.getTime() + DAY_MS);
  });

  it('sign-out deletes the row; a password change revokes the other sessions and the new one is stored hashed', async () => {
    await createUser(db, { name: 'cy', role: 'viewer', password: PW }, Date.now());
    const first = await signIn('cy');
    const second = await signIn('cy');
    expect(await rowsOf(first.userId)).toHaveLength(2);

    await (await auth()).api.signOut({ headers: cookieHeaders(first.cookie) });
    expect((await rowsOf(first.userId)).map((r) => r.token)).toEqual([hashToken(second.token)]);
    expect(await sessionUser(db, cookieHeaders(first.cookie))).toBeNull();
    expect(await sessionUser(db, cookieHeaders(second.cookie))).toMatchObject({ name: 'cy' });

    const third = await signIn('cy');
    const changed = await (
      await auth()
    ).api.changePassword({
      body: { currentPassword: PW, newPassword: 'a brand new password', revokeOtherSessions: true },
      headers: cookieHeaders(third.cookie),
      returnHeaders: true,
    });
    const newToken = changed.response.token!;
    expect(setCookie(changed.headers)).toBe(signed(newToken));
    expect((await rowsOf(first.userId)).map((r) => r.token)).toEqual([hashToken(newToken)]);
    expect(await sessionUser(db, cookieHeaders(second.cookie))).toBeNull();
    expect(await sessionUser(db, cookieHeaders(third.cookie))).toBeNull();
    expect(await sessionUser(db, cookieHeaders(setCookie(changed.headers)!))).toMatchObject({ name: 'cy' });
  });

  it('aqven user passwd and user remove end the sessions signed in through the form', async () => {
    await createUser(db, { name: 'dee', role: 'viewer', password: PW }, Date.now());
    await createUser(db, { name: 'eve', role: 'admin', password: PW }, Date.now());
    const dee = await signIn('dee');
    expect(await setPassword(db, 'dee', 'another long password', Date.now())).toEqual({ name: 'dee', signedOut: 1 });
    expect(await sessionUser(db, cookieHeaders(dee.cookie))).toBeNull();
    const again = await signIn('dee', 'another long password');
    expect(await sessionUser(db, cookieHeaders(again.cookie))).toMatchObject({ name: 'dee' });
    expect(await removeUser(db, 'dee')).toEqual({ name: 'dee', signedOut: 1 });
    expect(await sessionUser(db, cookieHeaders(again.cookie))).toBeNull();
  });

  it('the signing key: PostgreSQL requires AQVEN_AUTH_SECRET and deletes a stored one; SQLite keeps a generated one when it is unset', async () => {
    const setting = async (d: Db) => (await d.q.select().from(d.t.settings).where(eq(d.t.settings.key, 'auth_secret')))[0]?.value;
    // another process over the same database: its own auth (authFor keeps one per Db)
    const [other, another, third] = [otherProcess(t), otherProcess(t), otherProcess(t)];
    try {
      if (dialect === 'pg') {
        await expect(authFor(other.db, {})).rejects.toThrow(
          "AQVEN_AUTH_SECRET is required with a PostgreSQL database (AQVEN_DATABASE_URL): it signs the dashboard's session cookies and is never kept in the database; make one with `openssl rand -hex 32` and give every dashboard process the same value",
        );
        // a key an older version kept in the database could forge a cookie: it goes, and is never used
        await db.q.insert(db.t.settings).values({ key: 'auth_secret', value: 'x'.repeat(64) });
        const a = await authFor(another.db, { AQVEN_AUTH_SECRET: SECRET });
        expect(await setting(db)).toBeUndefined();
        expect((await a.$context).secret).toBe(SECRET);
      } else {
        const a = await authFor(other.db, {});
        const stored = await setting(db);
        expect(stored).toMatch(/^[0-9a-f]{64}$/);
        expect((await a.$context).secret).toBe(stored);
        expect((await (await authFor(another.db, { AQVEN_AUTH_SECRET: SECRET })).$context).secret).toBe(SECRET);
      }
      await expect(authFor(third.db, { AQVEN_AUTH_SECRET: 'too short' })).rejects.toThrow('AQVEN_AUTH_SECRET must be at least 32 characters; make one with `openssl rand -hex 32`');
    } finally {
      for (const p of [other, another, third]) await p.close();
    }
  });
});
