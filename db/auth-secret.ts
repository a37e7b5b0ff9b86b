// The key that signs the dashboard's session cookies (DESIGN: The dashboard, Sessions): where it
// comes from depends on the database, so the rule lives here, in db/, and both doors that need it —
// `aqven serve` before it binds (authSecretForEnv) and the dashboard's auth (sessionSigningKey) —
// call it rather than asking which database they are on.
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { sharedDatabaseUrl } from './client';
import type { Db } from './types';

type Env = Readonly<Record<string, string | undefined>>;

/** the shortest AQVEN_AUTH_SECRET accepted (`openssl rand -hex 32` makes 64 characters) */
export const AUTH_SECRET_MIN = 32;

/** AQVEN_AUTH_SECRET is unset where it is required (PostgreSQL mode), or too short: bad configuration. */
export class AuthSecretError extends Error {
  readonly code = 'E_AUTH_SECRET';
  constructor(message: string) {
    super(message);
    this.name = 'AuthSecretError';
  }
}

/**
 * The key that signs the dashboard's session cookies as the environment gives it (DESIGN: The
 * dashboard, Sessions): AQVEN_AUTH_SECRET, trimmed; null when it is unset on SQLite, whose file
 * lives on the serving machine and may keep a generated key. PostgreSQL mode requires it: a
 * database that workers, backups and copies read must hold nothing that forges a cookie.
 */
function authSecretFromEnv(dialect: Db['dialect'], env: Env): string | null {
  const secret = env.AQVEN_AUTH_SECRET?.trim();
  const make = 'make one with `openssl rand -hex 32`';
  if (!secret) {
    if (dialect === 'sqlite') return null;
    throw new AuthSecretError(
      `AQVEN_AUTH_SECRET is required with a PostgreSQL database (AQVEN_DATABASE_URL): it signs the dashboard's session cookies and is never kept in the database; ${make} and give every dashboard process the same value`,
    );
  }
  if (secret.length < AUTH_SECRET_MIN) throw new AuthSecretError(`AQVEN_AUTH_SECRET must be at least ${AUTH_SECRET_MIN} characters; ${make}`);
  return secret;
}

/**
 * AQVEN_AUTH_SECRET checked for the database the environment names (AuthSecretError when PostgreSQL
 * mode has none, or it is too short); null: none, on SQLite. An AQVEN_DATABASE_URL that names no
 * database we open is refused as everywhere (DatabaseUrlError), never taken for SQLite mode.
 */
export function authSecretForEnv(env: Env): string | null {
  return authSecretFromEnv(sharedDatabaseUrl(env) === null ? 'sqlite' : 'pg', env);
}

/**
 * The key that signs session cookies over `db`. PostgreSQL mode: AQVEN_AUTH_SECRET, required
 * (AuthSecretError without it); a key an older version kept in `settings` is deleted, as anyone
 * who read it could forge a cookie. SQLite mode: AQVEN_AUTH_SECRET when set, else one generated
 * the first time it is needed and kept in `settings` (the file is on the serving machine), so
 * every server process over one database signs alike and a restart keeps everyone signed in.
 */
export async function sessionSigningKey(db: Db, env: Env): Promise<string> {
  const fromEnv = authSecretFromEnv(db.dialect, env);
  if (db.dialect === 'pg') {
    await db.q.delete(db.t.settings).where(eq(db.t.settings.key, 'auth_secret'));
    return fromEnv!;
  }
  if (fromEnv) return fromEnv;
  const read = async () => (await db.q.select().from(db.t.settings).where(eq(db.t.settings.key, 'auth_secret')))[0]?.value;
  const stored = await read();
  if (stored) return stored;
  // two processes racing here: the first insert wins, both read the winner
  await db.q
    .insert(db.t.settings)
    .values({ key: 'auth_secret', value: randomBytes(32).toString('hex') })
    .onConflictDoNothing();
  return (await read())!;
}
