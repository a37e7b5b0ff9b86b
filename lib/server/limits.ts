// How often sign-ins may fail (DESIGN: The dashboard, "Request limits"): fixed windows counted in
// the database (db/request-limits.ts), so every server process over one database shares them. A
// refusal says when to come back. The limits of a known caller (runs and notes per minute, the
// spend budget) are lib/contracts/caller-limits.ts's.
import 'server-only';
import { isIPv4, isIPv6 } from 'node:net';
import { hitLimit, refundLimit, remember, remembered } from '@/db/request-limits';
import type { Db } from '@/db/types';
import { retryWait } from '@/lib/contracts/caller-limits';

type Env = Readonly<Record<string, string | undefined>>;

const MINUTE_MS = 60_000;
/** failed sign-ins allowed per account from one address, and per address, in SIGN_IN_WINDOW_MS */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 30;
export const SIGN_IN_WINDOW_MS = 15 * MINUTE_MS;
/**
 * Failed sign-ins per minute over the whole database, whatever the name and address: each costs a
 * scrypt hash (0.1-0.2 s of a core, measured on a 2-core server), so 120 a minute hold guessing to
 * at most ~0.4 of a core, and are still far more than a team mistypes. Addresses the account signed
 * in from before are not held to it (signInLimit), so a flood keeps only newcomers waiting.
 */
export const DEFAULT_SIGN_IN_FAILURES_PER_MINUTE = 120;

export interface Refusal {
  error: string;
  retryAfterS: number;
}

/** AQVEN_SIGN_IN_FAILURES_PER_MINUTE: failed sign-ins allowed per minute over the database (default 120). */
export function signInFailuresPerMinute(env: Env = process.env): number {
  const raw = env.AQVEN_SIGN_IN_FAILURES_PER_MINUTE?.trim();
  if (!raw) return DEFAULT_SIGN_IN_FAILURES_PER_MINUTE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`AQVEN_SIGN_IN_FAILURES_PER_MINUTE must be a whole number ≥ 1, got "${raw}"`);
  return n;
}

/** An IPv6 address (valid, without zone) as its eight 16-bit groups. */
function ipv6Groups(a: string): number[] {
  const groups = (part: string) =>
    part
      ? part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [b0, b1, b2, b3] = g.split('.').map(Number) as [number, number, number, number];
          return [(b0 << 8) | b1, (b2 << 8) | b3];
        })
      : [];
  const [head = '', tail] = a.split('::');
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  return [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/**
 * The key a client address is counted under: an IPv4 address as it is; an IPv4-mapped IPv6
 * address as its IPv4 address; any other IPv6 address by its /64, the block one subscriber gets
 * (so walking through one's own addresses buys no new allowance). `unknown` when the address is not
 * known (no `aqven serve`, no trusted proxy), so every such client shares one key: signInLimit
 * refuses such a sign-in before counting anything.
 */
export function addressKey(peer: string | null): string {
  if (!peer?.trim()) return 'unknown';
  // a zone (fe80::1%eth0) names our own interface, not the client
  const a = peer
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  if (isIPv4(a)) return a;
  if (!isIPv6(a)) return a.slice(0, 64);
  const g = ipv6Groups(a);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** The refusal of a sign-in whose client address cannot be told (lib/server/access.ts, peerAddress). */
export const SIGN_IN_ADDRESS_UNKNOWN =
  'this dashboard cannot tell which address this sign-in comes from, so it refuses it: start the dashboard with aqven serve, and behind your own proxy set AQVEN_TRUST_PROXY=1 with the proxy sending X-Forwarded-For';

/** A sign-in let through to the password check: the counts it holds until it succeeds (signInSucceeded). */
export interface SignInAttempt {
  name: string;
  address: string;
  /** the keys counted for it, given back if it succeeds */
  counted: string[];
  at: number;
}

const knownKey = (name: string, address: string) => `login:known:${name}@${address}`;

/**
 * Lets a sign-in of account `name` (already a valid, normalized name: normalizeName) from client
 * address `peer` through to its password check, or refuses it. Only failures count, but each
 * attempt is counted before its password is checked and given back when it succeeds, so callers
 * racing each other cannot all pass one check. Three limits, in order: the address's failures
 * (SIGN_IN_FAILURES_PER_ADDRESS in 15 min, every account); the account's failures from this address
 * (SIGN_IN_FAILURES_PER_ACCOUNT in 15 min: a lock nobody elsewhere can set off); failures over the
 * whole database (signInFailuresPerMinute()). An address the account signed in from before (90
 * days: MEMO_MS) passes the last two: whoever shares it cannot lock the user out, nor can a flood
 * from elsewhere. A refusal gives back what this attempt counted before it.
 */
export async function signInLimit(db: Db, name: string, peer: string | null, now = Date.now(), env: Env = process.env): Promise<SignInAttempt | Refusal> {
  // with no address every client would share one allowance (and one "known address"): refused instead
  if (!peer?.trim()) return { error: SIGN_IN_ADDRESS_UNKNOWN, retryAfterS: 0 };
  const address = addressKey(peer);
  const known = await remembered(db, knownKey(name, address), now);
  const checks: [string, number, number, string][] = [[`login:addr:${address}`, SIGN_IN_FAILURES_PER_ADDRESS, SIGN_IN_WINDOW_MS, 'from this address']];
  if (!known) {
    checks.push([`login:acct:${name}@${address}`, SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_WINDOW_MS, 'from this address for this account']);
    checks.push(['login:all', signInFailuresPerMinute(env), MINUTE_MS, 'on this dashboard']);
  }
  const counted: string[] = [];
  for (const [key, limit, windowMs, where] of checks) {
    const r = await hitLimit(db, key, { limit, windowMs }, now);
    if (!r.ok) {
      for (const k of counted) await refundLimit(db, k, now);
      const w = retryWait(r.retryAfterMs);
      return { error: `too many failed sign-ins ${where}; try again in ${w.words}`, retryAfterS: w.retryAfterS };
    }
    counted.push(key);
  }
  return { name, address, counted, at: now };
}

/** The password was right: the attempt's counts are given back, and its address is known to the account from now on. */
export async function signInSucceeded(db: Db, attempt: SignInAttempt, now = Date.now()): Promise<void> {
  await signInUnchecked(db, attempt);
  await remember(db, knownKey(attempt.name, attempt.address), now);
}

/** The password could not be checked (the database failed, not the caller): the attempt's counts are given back. */
export async function signInUnchecked(db: Db, attempt: SignInAttempt): Promise<void> {
  for (const k of attempt.counted) await refundLimit(db, k, attempt.at);
}
