// Sessions of the dashboard's users (DESIGN: The dashboard, "Accounts, roles and tokens"), through
// better-auth: it verifies passwords (scrypt), creates and looks up sessions in the `sessions`
// table, and signs the cookie. Its HTTP endpoints are not mounted: the login form, sign-out and the
// password change are server actions that call `auth.api.*` in-process, so the only ways in are
// the ones written here. Users and tokens are made by `aqven user` / `aqven token`
// (db/account-queries.ts), never by sign-up.
import 'server-only';
import { randomBytes } from 'node:crypto';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { nextCookies } from 'better-auth/next-js';
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/types';
import { isRole, type Role } from '@/lib/shared/roles';

/** How long a session lasts without use; each day of use extends it (DESIGN: Sessions). */
export const SESSION_TTL_S = 7 * 24 * 60 * 60;
const SESSION_REFRESH_S = 24 * 60 * 60;
const COOKIE_PREFIX = 'aqven';
/** the cookie better-auth sets (its `__Secure-` form when cookies are Secure) */
export const SESSION_COOKIE = `${COOKIE_PREFIX}.session_token`;

function buildAuth(db: Db, secret: string, env: Readonly<Record<string, string | undefined>>) {
  const publicUrl = env.AQVEN_PUBLIC_URL?.trim() || undefined;
  return betterAuth({
    appName: 'AQVEN',
    secret,
    // used for the cookie's Secure flag; the endpoints that would check origins are not mounted
    baseURL: publicUrl ?? 'http://localhost',
    database: drizzleAdapter(db.q, {
      provider: db.dialect,
      schema: { user: db.t.users, session: db.t.sessions, account: db.t.accounts, verification: db.t.verifications },
    }),
    user: { additionalFields: { role: { type: 'string', required: false, defaultValue: 'viewer', input: false } } },
    session: { expiresIn: SESSION_TTL_S, updateAge: SESSION_REFRESH_S, cookieCache: { enabled: false } },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 12, maxPasswordLength: 128, revokeSessionsOnPasswordReset: true },
    // login attempts are limited in lib/actions/sign-in.ts, per account and per address, across processes
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

/**
 * The key that signs session cookies: AQVEN_AUTH_SECRET when set, else one generated the first
 * time it is needed and kept in the database (table `settings`), so every server process over one
 * database signs alike and a restart keeps everyone signed in.
 */
async function authSecret(db: Db, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const fromEnv = env.AQVEN_AUTH_SECRET?.trim();
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error('AQVEN_AUTH_SECRET must be at least 32 characters (e.g. `openssl rand -hex 32`)');
    return fromEnv;
  }
  const read = async () => (await db.q.select().from(db.t.settings).where(eq(db.t.settings.key, 'auth_secret')))[0]?.value;
  const stored = await read();
  if (stored) return stored;
  // two processes racing here: the first insert wins, both read the winner
  await db.q.insert(db.t.settings).values({ key: 'auth_secret', value: randomBytes(32).toString('hex') }).onConflictDoNothing();
  return (await read())!;
}

const cache = new WeakMap<Db, Promise<Auth>>();

/** better-auth over `db` (one per database per process). */
export function authFor(db: Db, env: Readonly<Record<string, string | undefined>> = process.env): Promise<Auth> {
  let auth = cache.get(db);
  if (!auth) {
    auth = authSecret(db, env).then((secret) => buildAuth(db, secret, env));
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
