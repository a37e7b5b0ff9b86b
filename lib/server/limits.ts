// How often a caller may start runs and try to sign in (DESIGN: The dashboard, "Request limits"):
// fixed windows counted in the database (db/request-limits.ts), so every server process over one
// database shares them. A refusal says when to come back; `POST /api/runs` sends it as Retry-After.
import 'server-only';
import { clearLimit, hitLimit } from '@/db/request-limits';
import type { Db } from '@/db/types';
import type { Caller } from './access';
import { serverSession } from './session';

type Env = Readonly<Record<string, string | undefined>>;

const MINUTE_MS = 60_000;
/** sign-in attempts per account, and per address, in LOGIN_WINDOW_MS */
export const LOGIN_LIMIT_PER_ACCOUNT = 10;
export const LOGIN_LIMIT_PER_ADDRESS = 30;
export const LOGIN_WINDOW_MS = 15 * MINUTE_MS;
export const DEFAULT_RUNS_PER_MINUTE = 60;

export interface Refusal {
  error: string;
  retryAfterS: number;
}

/** AQVEN_RUNS_PER_MINUTE: runs one caller may start per minute (default 60; 0 turns the limit off). */
export function runsPerMinute(env: Env = process.env): number {
  const raw = env.AQVEN_RUNS_PER_MINUTE?.trim();
  if (!raw) return DEFAULT_RUNS_PER_MINUTE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`AQVEN_RUNS_PER_MINUTE must be a whole number ≥ 0 (0 = no limit), got "${raw}"`);
  return n;
}

function wait(ms: number): { retryAfterS: number; words: string } {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return { retryAfterS: s, words: s < 90 ? `${s} s` : `${Math.ceil(s / 60)} min` };
}

/** Counts one run start of `caller`; a refusal once they pass runsPerMinute(). */
export async function runStartLimit(caller: Caller, now = Date.now()): Promise<Refusal | null> {
  const limit = runsPerMinute();
  if (limit === 0) return null;
  const { db } = await serverSession();
  const key = caller.kind === 'open' ? 'runs:open' : `runs:${caller.kind}:${caller.name}`;
  const r = await hitLimit(db, key, { limit, windowMs: MINUTE_MS }, now);
  if (r.ok) return null;
  const w = wait(r.retryAfterMs);
  return { error: `too many runs started: at most ${limit} a minute (AQVEN_RUNS_PER_MINUTE); try again in ${w.words}`, retryAfterS: w.retryAfterS };
}

/** Login names are at most 64 characters; a longer one is still counted, under its first 64. */
const accountKey = (name: string) => `login:user:${name.slice(0, 64)}`;

/** Counts one sign-in attempt for the account and the address; a refusal once either passes its limit. */
export async function signInLimit(db: Db, name: string, address: string | null, now = Date.now()): Promise<Refusal | null> {
  const checks: [string, number][] = [[accountKey(name), LOGIN_LIMIT_PER_ACCOUNT]];
  if (address) checks.push([`login:addr:${address}`, LOGIN_LIMIT_PER_ADDRESS]);
  for (const [key, limit] of checks) {
    const r = await hitLimit(db, key, { limit, windowMs: LOGIN_WINDOW_MS }, now);
    if (!r.ok) {
      const w = wait(r.retryAfterMs);
      return { error: `too many sign-in attempts; try again in ${w.words}`, retryAfterS: w.retryAfterS };
    }
  }
  return null;
}

/** A successful sign-in forgets the account's failed attempts. */
export function signedIn(db: Db, name: string): Promise<void> {
  return clearLimit(db, accountKey(name));
}
