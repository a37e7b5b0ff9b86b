// Stored accounts and API tokens (DESIGN: The dashboard, "Accounts, roles and tokens"): the one
// home of their names, passwords and token hashes. Users are the rows better-auth's email+password
// sign-in reads (a user row, and an account row holding the scrypt hash); a token is kept only as
// its sha256, and shown once when it is made.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { and, count, eq, isNull, lt, lte, max, ne, or, sql } from 'drizzle-orm';
import { ROLES, isRole, type Role } from '@/lib/shared/roles';
import { listAudit, recordAuditOrWarn } from './audit-queries';
import { transaction } from './tx';
import type { Db } from './types';

export { ROLES, isRole, type Role };

export const NAME_MAX = 64;
export const PASSWORD_MIN = 12;
/** better-auth's sign-in refuses a longer password (its `maxPasswordLength`, counted in UTF-16 units) */
export const PASSWORD_MAX = 128;
/** what every token starts with, so a leaked one is recognisable (and a stray header is refused without a query) */
export const TOKEN_PREFIX = 'aqven_';
/** a token's last use is written at most this often, so a busy service does not write on every request */
export const TOKEN_USE_WRITE_MS = 60_000;
/** how long a token is accepted unless its maker says otherwise: 90 days (`aqven token create --expires`) */
export const DEFAULT_TOKEN_TTL_MS = 90 * 86_400_000;
/** a use of an expired token is recorded in the audit trail at most this often per token */
export const USE_AFTER_EXPIRY_EVERY_MS = 86_400_000;
/**
 * What a token may be made for beyond the API: `metrics`, reading GET /metrics and nothing else (a
 * Prometheus scrape job's credential). A token without a scope calls the /api routes its role allows.
 */
export const TOKEN_SCOPES = ['metrics'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** better-auth signs in by email; a user's is made from the login name and never shown */
const EMAIL_DOMAIN = 'users.aqven.invalid';
/** the first key of the accounts lock (PostgreSQL advisory locks: "acct" in ASCII) */
const ACCOUNTS_LOCK = 0x61636374;
// 32 random bytes in base64url, after the prefix
const TOKEN_RE = /^aqven_[A-Za-z0-9_-]{43}$/;
// ASCII only before lowercasing: "\u212A" (Kelvin) must not become "k". No ".." and no final "."
// because the login's email must stay an address better-auth's sign-in accepts.
const NAME_RE = /^[a-z0-9](?:[a-z0-9_-]|\.(?!\.))*$/i;

export type AccountErrorCode = 'E_NAME' | 'E_ROLE' | 'E_PASSWORD' | 'E_EXISTS' | 'E_NOT_FOUND' | 'E_LAST_ADMIN' | 'E_LAST_USER';

/** A refusal of the accounts layer, by code: the input is bad (E_NAME, E_ROLE, E_PASSWORD) or the stored state says no. */
export class AccountError extends Error {
  constructor(
    readonly code: AccountErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AccountError';
  }
}

export interface UserInfo {
  id: string;
  name: string;
  role: Role;
  createdAt: Date;
}

export interface UserListed extends UserInfo {
  /**
   * When the user was last seen: the later of `users.last_seen_at` (their last sign-in or sign-out,
   * or the newest session a password change revoked) and the newest sign-in or daily refresh among
   * their sessions still stored; null when never.
   */
  lastSeenAt: Date | null;
  /** USD the runs they start may spend per UTC day (DESIGN: The dashboard, "Spend budgets"); null: no budget */
  budgetUsdPerDay: number | null;
}

export interface TokenInfo {
  name: string;
  role: Role;
  createdBy: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** when it stops being accepted (ms); null: never */
  expiresAt: number | null;
  /** USD the runs it starts may spend per UTC day; null: no budget */
  budgetUsdPerDay: number | null;
  /** null: the /api routes its role allows; `metrics`: GET /metrics only */
  scope: TokenScope | null;
}

export interface TokenCaller {
  id: string;
  name: string;
  role: Role;
  scope: TokenScope | null;
}

const shown = (raw: string) => JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);

/**
 * The stored form of a user or token name: trimmed, lowercased; 1 to 64 ASCII letters, digits, ".",
 * "_" and "-", starting with a letter or digit, no ".." and no "." at the end. Throws E_NAME otherwise.
 */
export function normalizeName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > NAME_MAX || !NAME_RE.test(name) || name.endsWith('.')) {
    throw new AccountError(
      'E_NAME',
      `${shown(raw)} is not a valid name: use 1 to ${NAME_MAX} lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (no ".." and no "." at the end)`,
    );
  }
  return name.toLowerCase();
}

/** The email better-auth signs `name` in with (the login form maps a typed name the same way). */
export function loginEmail(name: string): string {
  return `${normalizeName(name)}@${EMAIL_DOMAIN}`;
}

/** `role` as a Role; throws E_ROLE for anything else. */
export function checkRole(role: string): Role {
  if (!isRole(role)) throw new AccountError('E_ROLE', `${shown(role)} is not a role: use ${ROLES.join(', ')}`);
  return role;
}

/** Throws E_PASSWORD unless `plain` has 12 to 128 characters (UTF-16 units, as better-auth counts them). */
export function checkPassword(plain: string): void {
  if (plain.length < PASSWORD_MIN) throw new AccountError('E_PASSWORD', `the password is too short: at least ${PASSWORD_MIN} characters, got ${plain.length}`);
  if (plain.length > PASSWORD_MAX) throw new AccountError('E_PASSWORD', `the password is too long: at most ${PASSWORD_MAX} characters, got ${plain.length}`);
}

/** better-auth's scrypt hash; imported when needed, so the token commands and the server's token check do not load it. */
async function hashOf(plain: string): Promise<string> {
  const { hashPassword } = await import('better-auth/crypto');
  return hashPassword(plain);
}

/** the unique index refused the row: another writer took the name between our check and our insert */
function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE') return true;
  }
  return false;
}

/** PostgreSQL: account changes take turns (SQLite's BEGIN IMMEDIATE already does), so two removals cannot both pass the last-admin check. */
async function lockAccounts(db: Db, q: Db['q']): Promise<void> {
  if (db.dialect === 'pg') await q.select({ locked: sql`pg_advisory_xact_lock(${ACCOUNTS_LOCK})` }).from(sql`(values (0)) as one`);
}

// ---- users ----------------------------------------------------------------------------------

/** Whether any user exists (one indexed row read): until one does, the dashboard is open on loopback only. */
export async function anyUser(db: Db): Promise<boolean> {
  const { users } = db.t;
  return (await db.q.select({ id: users.id }).from(users).limit(1)).length > 0;
}

/** The user named `name`, or null — also for a name no user can have. */
export async function findUserByName(db: Db, name: string): Promise<UserInfo | null> {
  let login: string;
  try {
    login = normalizeName(name);
  } catch {
    return null;
  }
  const { users } = db.t;
  const [row] = await db.q.select({ id: users.id, name: users.name, role: users.role, createdAt: users.createdAt }).from(users).where(eq(users.name, login)).limit(1);
  return row ?? null;
}

/** The users by name, each with when it was last seen. */
export async function listUsers(db: Db): Promise<UserListed[]> {
  const { users, sessions } = db.t;
  const rows = await db.q
    .select({
      id: users.id,
      name: users.name,
      role: users.role,
      createdAt: users.createdAt,
      budgetUsdPerDay: users.budgetUsdPerDay,
      seen: users.lastSeenAt,
      session: max(sessions.updatedAt),
    })
    .from(users)
    .leftJoin(sessions, eq(sessions.userId, users.id))
    .groupBy(users.id)
    .orderBy(users.name);
  return rows.map(({ seen, session, ...u }) => ({ ...u, lastSeenAt: later(seen, session) }));
}

const later = (a: Date | null, b: Date | null): Date | null => (a && b ? (a > b ? a : b) : (a ?? b));
/** a user row whose last-seen time is unknown or before `at` (a later one is never replaced by an earlier) */
const seenBefore = (db: Db, at: Date) => or(isNull(db.t.users.lastSeenAt), lt(db.t.users.lastSeenAt, at));

/**
 * The user named `name` was seen at `now` (signing in, or out): kept on the user row, which outlives
 * their sessions. An earlier time never replaces a later one.
 */
export async function noteUserSeen(db: Db, name: string, now: number): Promise<void> {
  const { users } = db.t;
  const at = new Date(now);
  await db.q
    .update(users)
    .set({ lastSeenAt: at })
    .where(and(eq(users.name, normalizeName(name)), seenBefore(db, at)));
}

/** A user better-auth's email+password sign-in accepts: the user row and its credential account, in one transaction. */
export async function createUser(db: Db, u: { name: string; role: string; password: string }, now: number): Promise<UserInfo> {
  const name = normalizeName(u.name);
  const role = checkRole(u.role);
  checkPassword(u.password);
  const password = await hashOf(u.password); // before the transaction: SQLite's may await only queries
  const { users, accounts } = db.t;
  const id = randomUUID();
  const at = new Date(now);
  const exists = new AccountError('E_EXISTS', `a user named ${name} already exists`);
  try {
    await transaction(db, async (q) => {
      await lockAccounts(db, q);
      if ((await q.select({ id: users.id }).from(users).where(eq(users.name, name)).limit(1)).length) throw exists;
      await q.insert(users).values({ id, name, email: loginEmail(name), emailVerified: false, role, createdAt: at, updatedAt: at });
      await q.insert(accounts).values({ id: randomUUID(), accountId: id, providerId: 'credential', userId: id, password, createdAt: at, updatedAt: at });
    });
  } catch (err) {
    throw isUniqueViolation(err) ? exists : err;
  }
  return { id, name, role, createdAt: at };
}

/**
 * Removes the user; their sessions and credential go with them (ON DELETE CASCADE). Refuses
 * (E_LAST_ADMIN) to remove the last admin while other users remain: nobody could manage them; and
 * (E_LAST_USER) to remove the only user: with none, the dashboard would be open again to whatever
 * reaches it from this machine — a reverse proxy on it too — so once accounts exist, one stays.
 * Resolves with how many sessions were signed out.
 */
export async function removeUser(db: Db, name: string): Promise<{ name: string; signedOut: number }> {
  const login = normalizeName(name);
  const { users, sessions } = db.t;
  return transaction(db, async (q) => {
    await lockAccounts(db, q);
    const [user] = await q.select({ id: users.id, role: users.role }).from(users).where(eq(users.name, login)).limit(1);
    if (!user) throw new AccountError('E_NOT_FOUND', `no user named ${login}`);
    const [anyOther] = await q.select({ id: users.id }).from(users).where(ne(users.id, user.id)).limit(1);
    if (!anyOther) {
      throw new AccountError('E_LAST_USER', `${login} is the only user: without one the dashboard opens to this machine without sign-in; add another admin first`);
    }
    if (user.role === 'admin') {
      const [others] = await q.select({ n: count() }).from(users).where(ne(users.id, user.id));
      const [admins] = await q
        .select({ n: count() })
        .from(users)
        .where(and(ne(users.id, user.id), eq(users.role, 'admin')));
      const left = others?.n ?? 0;
      if (left > 0 && (admins?.n ?? 0) === 0) {
        throw new AccountError('E_LAST_ADMIN', `${login} is the last admin and ${left} other user${left === 1 ? ' remains' : 's remain'}: add another admin first`);
      }
    }
    const [signedOut] = await q.select({ n: count() }).from(sessions).where(eq(sessions.userId, user.id));
    await q.delete(users).where(eq(users.id, user.id));
    return { name: login, signedOut: signedOut?.n ?? 0 };
  });
}

/**
 * Replaces the user's password hash and deletes their sessions: they are signed out everywhere.
 * Resolves with how many sessions that was.
 */
export async function setPassword(db: Db, name: string, plain: string, now: number): Promise<{ name: string; signedOut: number }> {
  const login = normalizeName(name);
  checkPassword(plain);
  const password = await hashOf(plain);
  const { users, accounts, sessions } = db.t;
  const at = new Date(now);
  return transaction(db, async (q) => {
    const [user] = await q.select({ id: users.id }).from(users).where(eq(users.name, login)).limit(1);
    if (!user) throw new AccountError('E_NOT_FOUND', `no user named ${login}`);
    const credential = and(eq(accounts.userId, user.id), eq(accounts.providerId, 'credential'));
    const replaced = await q.update(accounts).set({ password, updatedAt: at }).where(credential).returning({ id: accounts.id });
    if (replaced.length === 0) {
      await q.insert(accounts).values({ id: randomUUID(), accountId: user.id, providerId: 'credential', userId: user.id, password, createdAt: at, updatedAt: at });
    }
    const gone = await q.delete(sessions).where(eq(sessions.userId, user.id)).returning({ id: sessions.id, seen: sessions.updatedAt });
    // when they were last seen outlives the sessions revoked here
    const newest = gone.reduce<Date | null>((m, g) => later(m, g.seen), null);
    if (newest)
      await q
        .update(users)
        .set({ lastSeenAt: newest })
        .where(and(eq(users.id, user.id), seenBefore(db, newest)));
    return { name: login, signedOut: gone.length };
  });
}

// ---- The key that signs session cookies ---------------------------------------------------------

// ---- API tokens -----------------------------------------------------------------------------

/** sha256 (hex) of a presented token — an API token, or a session's from its cookie: what is stored and looked up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A daily budget as stored: a finite amount of USD ≥ 0, or null (none). */
function budgetValue(usd: number | null | undefined): number | null {
  if (usd == null) return null;
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`a daily budget is an amount of USD ≥ 0, got ${usd}`);
  return usd;
}

/**
 * A new token for a service; `token` is returned here once and never stored (only its hash is).
 * `expiresAt` (ms) ends it — by default DEFAULT_TOKEN_TTL_MS after `now`; null (never) only when
 * asked for. `budgetUsdPerDay`: what the runs it starts may spend per UTC day (null: no budget).
 */
export async function createToken(
  db: Db,
  t: { name: string; role: string; createdBy: string | null; expiresAt?: number | null; budgetUsdPerDay?: number | null; scope?: TokenScope | null },
  now: number,
): Promise<{ token: string; info: TokenInfo }> {
  const name = normalizeName(t.name);
  const role = checkRole(t.role);
  const expiresAt = t.expiresAt === undefined ? now + DEFAULT_TOKEN_TTL_MS : t.expiresAt;
  if (expiresAt !== null && !(Number.isSafeInteger(expiresAt) && expiresAt > now)) throw new RangeError(`a token's expiry must be after its creation, got ${expiresAt}`);
  const budgetUsdPerDay = budgetValue(t.budgetUsdPerDay);
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const { apiTokens } = db.t;
  const row = {
    id: randomUUID(),
    name,
    role,
    tokenHash: hashToken(token),
    createdBy: t.createdBy,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt,
    budgetUsdPerDay,
    scope: t.scope ?? null,
  };
  const exists = (revokedAt: number | null) => new AccountError('E_EXISTS', `a token named ${name} already exists${revokedAt === null ? '' : ' (revoked)'}: choose another name`);
  try {
    await transaction(db, async (q) => {
      const [same] = await q.select({ revokedAt: apiTokens.revokedAt }).from(apiTokens).where(eq(apiTokens.name, name)).limit(1);
      if (same) throw exists(same.revokedAt);
      await q.insert(apiTokens).values(row);
    });
  } catch (err) {
    throw isUniqueViolation(err) ? exists(null) : err;
  }
  const { id: _id, tokenHash: _hash, ...info } = row;
  return { token, info };
}

/** Every token, oldest first, revoked ones included; never the hash. */
export async function listTokens(db: Db): Promise<TokenInfo[]> {
  const t = db.t.apiTokens;
  return db.q
    .select({
      name: t.name,
      role: t.role,
      createdBy: t.createdBy,
      createdAt: t.createdAt,
      lastUsedAt: t.lastUsedAt,
      revokedAt: t.revokedAt,
      expiresAt: t.expiresAt,
      budgetUsdPerDay: t.budgetUsdPerDay,
      scope: t.scope,
    })
    .from(t)
    .orderBy(t.createdAt, t.name);
}

/** Revokes the token named `name` from `now` on; revoking it again changes nothing (`already`). */
export async function revokeToken(db: Db, name: string, now: number): Promise<{ name: string; revokedAt: number; already: boolean }> {
  const login = normalizeName(name);
  const t = db.t.apiTokens;
  const [done] = await db.q
    .update(t)
    .set({ revokedAt: now })
    .where(and(eq(t.name, login), isNull(t.revokedAt)))
    .returning({ revokedAt: t.revokedAt });
  if (done) return { name: login, revokedAt: now, already: false };
  const [row] = await db.q.select({ revokedAt: t.revokedAt }).from(t).where(eq(t.name, login)).limit(1);
  if (!row) throw new AccountError('E_NOT_FOUND', `no token named ${login}`);
  return { name: login, revokedAt: row.revokedAt!, already: true };
}

/**
 * Who presents `token` (the value of `Authorization: Bearer …`): an existing, unrevoked, unexpired
 * token's id, name, role and scope, or null. Looked up by its hash, so no comparison of secrets takes place
 * here. Its last use is written when the stored one is a minute old or more (a compare-and-set:
 * requests at once write it once). A use after its expiry is refused and recorded in the audit
 * trail (`token.used-after-expiry`, from `address` when known) once a day per token, not on every
 * request.
 */
export async function tokenCaller(db: Db, token: string, now: number, address: string | null = null): Promise<TokenCaller | null> {
  if (!TOKEN_RE.test(token)) return null;
  const t = db.t.apiTokens;
  const [row] = await db.q
    .select({ id: t.id, name: t.name, role: t.role, scope: t.scope, lastUsedAt: t.lastUsedAt, expiresAt: t.expiresAt })
    .from(t)
    .where(and(eq(t.tokenHash, hashToken(token)), isNull(t.revokedAt)))
    .limit(1);
  if (!row) return null;
  if (row.expiresAt !== null && row.expiresAt <= now) {
    await noteUseAfterExpiry(db, row.name, row.expiresAt, now, address);
    return null;
  }
  const stale = now - TOKEN_USE_WRITE_MS;
  if (row.lastUsedAt === null || row.lastUsedAt <= stale) {
    await db.q
      .update(t)
      .set({ lastUsedAt: now })
      .where(and(eq(t.id, row.id), or(isNull(t.lastUsedAt), lte(t.lastUsedAt, stale))));
  }
  return { id: row.id, name: row.name, role: row.role, scope: row.scope };
}

/** An expired token was presented: recorded unless it was within the last day (a service retrying must not fill the trail). */
async function noteUseAfterExpiry(db: Db, name: string, expiresAt: number, now: number, address: string | null): Promise<void> {
  const actor = `token:${name}`;
  const recent = await listAudit(db, { kind: 'token.used-after-expiry', actor, since: now - USE_AFTER_EXPIRY_EVERY_MS + 1, limit: 1 });
  if (recent.rows.length > 0) return;
  const warn = (line: string) => console.error(`aqven: ${line}`);
  await recordAuditOrWarn(db, { kind: 'token.used-after-expiry', actor, address, target: actor, detail: { expiredAt: new Date(expiresAt).toISOString() } }, warn, now);
}

/** Sets (or, with null, removes) the daily spend budget of the user named `name` (DESIGN: The dashboard, "Spend budgets"). */
export async function setUserBudget(db: Db, name: string, usd: number | null): Promise<{ name: string; budgetUsdPerDay: number | null }> {
  const login = normalizeName(name);
  const budgetUsdPerDay = budgetValue(usd);
  const { users } = db.t;
  const done = await db.q.update(users).set({ budgetUsdPerDay }).where(eq(users.name, login)).returning({ id: users.id });
  if (done.length === 0) throw new AccountError('E_NOT_FOUND', `no user named ${login}`);
  return { name: login, budgetUsdPerDay };
}

/** Sets (or, with null, removes) the daily spend budget of the token named `name`, revoked or not. */
export async function setTokenBudget(db: Db, name: string, usd: number | null): Promise<{ name: string; budgetUsdPerDay: number | null }> {
  const login = normalizeName(name);
  const budgetUsdPerDay = budgetValue(usd);
  const t = db.t.apiTokens;
  const done = await db.q.update(t).set({ budgetUsdPerDay }).where(eq(t.name, login)).returning({ id: t.id });
  if (done.length === 0) throw new AccountError('E_NOT_FOUND', `no token named ${login}`);
  return { name: login, budgetUsdPerDay };
}
