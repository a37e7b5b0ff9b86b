// Sessions of the dashboard's users (DESIGN: The dashboard, "Accounts, roles and tokens"), through
// better-auth: it verifies passwords (scrypt), creates and looks up sessions in the `sessions`
// table, and signs the cookie. Its HTTP endpoints are not mounted: the login form, sign-out and the
// password change are server actions that call `auth.api.*` in-process, so the only ways in are
// the ones written here. Users and tokens are made by `aqven user` / `aqven token`
// (db/account-queries.ts), never by sign-up.
import 'server-only';
import { betterAuth } from 'better-auth';
import { nextCookies } from 'better-auth/next-js';
import { hashToken } from '@/db/account-queries';
import { authDatabaseAdapter } from '@/db/auth-adapter';
import { sessionSigningKey } from '@/db/auth-secret';
import type { Db } from '@/db/types';
import { isRole, type Role } from '@/lib/shared/roles';

/** How long a session lasts without use; each day of use extends it (DESIGN: Sessions). */
export const SESSION_TTL_S = 7 * 24 * 60 * 60;
const SESSION_REFRESH_S = 24 * 60 * 60;
const COOKIE_PREFIX = 'aqven';
/** the cookie better-auth sets (its `__Secure-` form when cookies are Secure) */
export const SESSION_COOKIE = `${COOKIE_PREFIX}.session_token`;

type AdapterFactory = ReturnType<typeof authDatabaseAdapter>;
type Adapter = ReturnType<AdapterFactory>;
type Where = NonNullable<Parameters<Adapter['findMany']>[0]['where']>[number];
type Row = Record<string, unknown> | null;
/** the tokens of one adapter call: each stored hash, mapped to the caller's token */
type Presented = Map<string, string>;

const isSessionModel = (model: string) => model === 'session' || model === 'sessions';

/** the hash of `token`, remembered so the row that holds it goes back with `token` */
function hashed(token: unknown, seen: Presented): string {
  if (typeof token !== 'string') throw new Error('a session token must be a string');
  const hash = hashToken(token);
  seen.set(hash, token);
  return hash;
}

/** `where` with every match on the session token turned into a match on its hash */
function hashWhere<W extends Where[] | undefined>(where: W, seen: Presented): W {
  if (!where) return where;
  return where.map((w) => {
    if (w.field !== 'token') return w;
    const op = w.operator ?? 'eq';
    if (op === 'eq' || op === 'ne') return { ...w, value: hashed(w.value, seen) };
    if ((op === 'in' || op === 'not_in') && Array.isArray(w.value)) return { ...w, value: w.value.map((t) => hashed(t, seen)) };
    throw new Error(`sessions.token holds hashes: it cannot be matched with "${op}"`);
  }) as W;
}

/** `data` with its token (when it has one) replaced by the token's hash */
function hashData<D extends Record<string, unknown> | undefined>(data: D, seen: Presented): D {
  return data && 'token' in data && data.token !== undefined ? { ...data, token: hashed(data.token, seen) } : data;
}

/** A row read back: its token is the caller's again when this call presented it, else the stored hash (which signs nobody in). */
function restore<R>(row: R, seen: Presented): R {
  const r = row as Row;
  const token = r?.token;
  return typeof token === 'string' && seen.has(token) ? ({ ...r, token: seen.get(token) } as R) : row;
}

/**
 * The adapter with `sessions.token` holding sha256 (hex) of each session token, never the token
 * (DESIGN: Sessions): a reader of the database or a backup cannot present it. better-auth reads and
 * writes sessions only through its adapter — sign-in (create), getSession (findOne by token), the
 * daily refresh (update by token), sign-out and expiry (delete by token), revocations (by user) —
 * so hashing here, on every call on the session model and inside transactions too, covers them
 * all; what goes back to better-auth carries the token it gave, as the cookie must.
 */
function hashSessions(a: Omit<Adapter, 'transaction'>): Omit<Adapter, 'transaction'> {
  const fresh = (): Presented => new Map();
  return {
    ...a,
    create: (async (d) => {
      if (!isSessionModel(d.model)) return a.create(d);
      const seen = fresh();
      return restore(await a.create({ ...d, data: hashData(d.data, seen) }), seen);
    }) as Adapter['create'],
    findOne: (async (d) => {
      if (!isSessionModel(d.model)) return a.findOne(d);
      const seen = fresh();
      return restore(await a.findOne({ ...d, where: hashWhere(d.where, seen) }), seen);
    }) as Adapter['findOne'],
    findMany: (async (d) => {
      if (!isSessionModel(d.model)) return a.findMany(d);
      const seen = fresh();
      return (await a.findMany({ ...d, where: hashWhere(d.where, seen) })).map((row) => restore(row, seen));
    }) as Adapter['findMany'],
    count: (d) => (isSessionModel(d.model) ? a.count({ ...d, where: hashWhere(d.where, fresh()) }) : a.count(d)),
    update: (async (d) => {
      if (!isSessionModel(d.model)) return a.update(d);
      const seen = fresh();
      return restore(await a.update({ ...d, where: hashWhere(d.where, seen), update: hashData(d.update, seen) }), seen);
    }) as Adapter['update'],
    updateMany: (d) => {
      if (!isSessionModel(d.model)) return a.updateMany(d);
      const seen = fresh();
      return a.updateMany({ ...d, where: hashWhere(d.where, seen), update: hashData(d.update, seen) });
    },
    delete: (d) => (isSessionModel(d.model) ? a.delete({ ...d, where: hashWhere(d.where, fresh()) }) : a.delete(d)),
    deleteMany: (d) => (isSessionModel(d.model) ? a.deleteMany({ ...d, where: hashWhere(d.where, fresh()) }) : a.deleteMany(d)),
    consumeOne: (async (d) => {
      if (!isSessionModel(d.model)) return a.consumeOne(d);
      const seen = fresh();
      return restore(await a.consumeOne({ ...d, where: hashWhere(d.where, seen) }), seen);
    }) as Adapter['consumeOne'],
    incrementOne: (async (d) => {
      if (!isSessionModel(d.model)) return a.incrementOne(d);
      const seen = fresh();
      return restore(await a.incrementOne({ ...d, where: hashWhere(d.where, seen), set: hashData(d.set, seen) }), seen);
    }) as Adapter['incrementOne'],
  };
}

/** drizzleAdapter's factory, its adapters hashing session tokens (hashSessions), in and out of transactions. */
function hashingSessionTokens(factory: AdapterFactory): AdapterFactory {
  return (options) => {
    const inner = factory(options);
    return { ...hashSessions(inner), transaction: (cb) => inner.transaction((trx) => cb(hashSessions(trx))) };
  };
}

function buildAuth(db: Db, secret: string, env: Readonly<Record<string, string | undefined>>) {
  const publicUrl = env.AQVEN_PUBLIC_URL?.trim() || undefined;
  return betterAuth({
    appName: 'AQVEN',
    secret,
    // used for the cookie's Secure flag; the endpoints that would check origins are not mounted
    baseURL: publicUrl ?? 'http://localhost',
    database: hashingSessionTokens(authDatabaseAdapter(db)),
    user: { additionalFields: { role: { type: 'string', required: false, defaultValue: 'viewer', input: false } } },
    session: { expiresIn: SESSION_TTL_S, updateAge: SESSION_REFRESH_S, cookieCache: { enabled: false } },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 12, maxPasswordLength: 128, revokeSessionsOnPasswordReset: true },
    // failed sign-ins are limited in lib/server/limits.ts (signInLimit), across processes
    rateLimit: { enabled: false },
    advanced: {
      cookiePrefix: COOKIE_PREFIX,
      useSecureCookies: publicUrl?.startsWith('https://') ?? false,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax' },
    },
    telemetry: { enabled: false },
    // a wrong password is an expected event, not a warning in the server log
    logger: { level: 'error' },
    plugins: [nextCookies()],
  });
}

export type Auth = ReturnType<typeof buildAuth>;

const cache = new WeakMap<Db, Promise<Auth>>();

/** better-auth over `db` (one per database per process). */
export function authFor(db: Db, env: Readonly<Record<string, string | undefined>> = process.env): Promise<Auth> {
  let auth = cache.get(db);
  if (!auth) {
    auth = sessionSigningKey(db, env).then((secret) => buildAuth(db, secret, env));
    auth.catch(() => cache.delete(db));
    cache.set(db, auth);
  }
  return auth;
}

export interface SignedInUser {
  id: string;
  name: string;
  role: Role;
  sessionId: string;
}

/** The user whose session cookie `headers` carry, or null (no cookie, a bad signature, expired, revoked). */
export async function sessionUser(db: Db, headers: Headers): Promise<SignedInUser | null> {
  const auth = await authFor(db);
  const found = await auth.api.getSession({ headers });
  if (!found) return null;
  const role = (found.user as { role?: unknown }).role;
  return {
    id: found.user.id,
    name: found.user.name,
    role: isRole(role) ? role : 'viewer',
    sessionId: found.session.id,
  };
}
