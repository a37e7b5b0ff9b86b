// The limits that hold a CALLER, whatever door they come through (DESIGN: The dashboard, "Request
// limits" and "Spend budgets"): runs started per minute, notes added per minute, the daily spend
// budget. One function, `callerLimits`, checks them for every door — POST /api/runs, the /flows
// form, the replay forms (each replay of a batch too), the "Measure limits" form, the note form,
// `aqven run`/`replay`/`limits`, and before each attempt of a run (the run loop, on the dashboard
// or on a queue worker) and of a limits probe. Counted in the database (db/request-limits.ts,
// db/spend-queries.ts), so every process over one database shares them. Server-only.
import { hitLimit } from '@/db/request-limits';
import { checkBudget, type BudgetRefusal } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { budgetCaller } from '@/lib/shared/spend-budget';
import { noteAuthor } from './add-note';

type Env = Readonly<Record<string, string | undefined>>;

const MINUTE_MS = 60_000;
export const DEFAULT_RUNS_PER_MINUTE = 60;
/** notes one caller may add per minute (a person writes a few; a loop writing thousands is held back) */
export const NOTES_PER_MINUTE = 30;
/** the code of a refusal by a per-minute limit */
export const LIMIT_CODE = 'E_LIMIT';

/**
 * What a caller is about to do: start a run (a flow run, a replay — each of a batch —, a limits
 * probe), send one attempt of one, or add a note.
 */
export type CallerAct = 'run-start' | 'attempt' | 'note';

export interface CallerRefusal {
  /** E_LIMIT: a per-minute limit; E_BUDGET: the daily spend budget */
  code: 'E_LIMIT' | 'E_BUDGET';
  message: string;
  hint?: string;
  /** seconds until it may try again, at least 1: a 429's Retry-After */
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

/** A wait as a refusal says it (`40 s`, `3 min`) and as Retry-After sends it. */
export function retryWait(ms: number): { retryAfterS: number; words: string } {
  const s = Math.max(1, Math.ceil(ms / 1000));
  return { retryAfterS: s, words: s < 90 ? `${s} s` : `${Math.ceil(s / 60)} min` };
}

/**
 * The key a caller's run starts are counted under, from who they are (`author`: a user's name,
 * `token:<name>`, null for the open dashboard); null for `cli:<login>`, a shell on the server,
 * which no run limit holds (as it has no budget: budgetCaller).
 */
function runStartKey(author: string | null): string | null {
  if (author === null) return 'runs:open';
  if (author.startsWith('cli:')) return null;
  return author.startsWith('token:') ? `runs:token:${author.slice('token:'.length)}` : `runs:user:${author}`;
}

async function perMinute(db: Db, key: string, limit: number, now: number, words: (wait: string) => string): Promise<CallerRefusal | null> {
  const r = await hitLimit(db, key, { limit, windowMs: MINUTE_MS }, now);
  if (r.ok) return null;
  const w = retryWait(r.retryAfterMs);
  return { code: LIMIT_CODE, message: words(w.words), retryAfterS: w.retryAfterS };
}

/**
 * Whether `author` (a user's name, `token:<name>`, `cli:<login>`, null for the open dashboard) may
 * do `act` now: null, or the refusal. A run start is counted against the runs per minute first
 * (a refused one counts too), then the spend budget is read; an attempt reads the budget; a note is
 * counted against the notes per minute.
 */
export async function callerLimits(db: Db, author: string | null, act: 'attempt', o?: { now?: number; env?: Env }): Promise<BudgetRefusal | null>;
export async function callerLimits(db: Db, author: string | null, act: CallerAct, o?: { now?: number; env?: Env }): Promise<CallerRefusal | null>;
export async function callerLimits(db: Db, author: string | null, act: CallerAct, o: { now?: number; env?: Env } = {}): Promise<CallerRefusal | null> {
  const now = o.now ?? Date.now();
  if (act === 'note') {
    return perMinute(db, `notes:${noteAuthor(author)}`, NOTES_PER_MINUTE, now, (wait) => `too many notes: at most ${NOTES_PER_MINUTE} a minute; try again in ${wait}`);
  }
  if (act === 'run-start') {
    const limit = runsPerMinute(o.env);
    const key = runStartKey(author);
    const limited =
      key && limit > 0 ? await perMinute(db, key, limit, now, (wait) => `too many runs started: at most ${limit} a minute (AQVEN_RUNS_PER_MINUTE); try again in ${wait}`) : null;
    if (limited) return limited;
  }
  return checkBudget(db, budgetCaller(author), now);
}
