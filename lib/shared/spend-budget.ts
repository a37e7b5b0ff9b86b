// Daily spend budgets (DESIGN: The dashboard, "Spend budgets"): the words and numbers every door
// shares — who a budget belongs to, the UTC day it counts, how a budget is written (`5/day`,
// `none`) and how a refusal reads. Pure: the reads and writes are db/spend-queries.ts's.
import { fmtCost } from './cost-text';
import { DAY_MS, utcDate, utcDay } from './utc-day';

/** the error code of a run, replay or probe stopped (or refused at start) by its caller's budget */
export const BUDGET_CODE = 'E_BUDGET';

/** The UTC day of `ms` as `caller_spend.day` keys it: YYYY-MM-DD. */
export const spendDay = utcDate;

/** When the UTC day of `ms` ends: the next 00:00 UTC, when a spent budget is whole again. */
export function nextUtcMidnight(ms: number): number {
  return utcDay(ms) + DAY_MS;
}

/**
 * Whose budget a run counts against, from its `started_by`: a user's name or `token:<name>`; null
 * for nobody (the open dashboard) and for `cli:<login>` (a shell on the server: no account, no budget).
 */
export function budgetCaller(startedBy: string | null | undefined): string | null {
  if (!startedBy || startedBy.startsWith('cli:')) return null;
  return startedBy;
}

/** `token ci` or `user ana`: a caller as a refusal names it. */
export function callerWords(caller: string): string {
  return caller.startsWith('token:') ? `token ${caller.slice('token:'.length)}` : `user ${caller}`;
}

/** The largest daily budget accepted: a typo's extra zeros are refused, not stored. */
export const BUDGET_MAX_USD = 1_000_000;

const BUDGET_RE = /^\$?(\d+(?:\.\d+)?)\s*\/\s*day$/i;

export const BUDGET_HINT = 'write a daily budget in USD as "5/day" (or "0.50/day"), or "none" for no budget';

/**
 * A daily budget as written on the command line: `5/day`, `$0.50/day` → USD; `none` → null (no
 * budget). Undefined when the text is neither (BUDGET_HINT says what is).
 */
export function parseDailyBudget(text: string): number | null | undefined {
  const t = text.trim();
  if (t.toLowerCase() === 'none') return null;
  const m = BUDGET_RE.exec(t);
  if (!m) return undefined;
  const usd = Number(m[1]);
  return Number.isFinite(usd) && usd <= BUDGET_MAX_USD ? usd : undefined;
}

/** USD as a budget reads: whole cents with two decimals ($5.00, $0.50), finer amounts as every cost does. */
export function fmtUsd(usd: number): string {
  const cents = usd * 100;
  return Math.abs(cents - Math.round(cents)) < 1e-9 ? `$${usd.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}` : fmtCost(usd);
}

/** `$5.00/day`, or `none`. */
export function fmtBudget(usd: number | null): string {
  return usd === null ? 'none' : `${fmtUsd(usd)}/day`;
}

/** Spend today against a budget, as the lists show it: `$1.20 of $5.00/day`, or `$1.20` without a budget. */
export function fmtSpend(spentUsd: number, budgetUsd: number | null): string {
  return budgetUsd === null ? fmtUsd(spentUsd) : `${fmtUsd(spentUsd)} of ${fmtBudget(budgetUsd)}`;
}

/** A wait in whole minutes, rounded up: `3 h 12 min`, `45 min`, `1 min`. */
export function fmtWait(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m} min` : m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/** Whether `spentUsd` today leaves nothing of `budgetUsd`: spent up to it or past it (a budget of 0 allows nothing). */
export function budgetSpent(spentUsd: number, budgetUsd: number | null): boolean {
  return budgetUsd !== null && spentUsd >= budgetUsd - 1e-12;
}

export interface BudgetRefusal {
  code: typeof BUDGET_CODE;
  message: string;
  hint: string;
  /** the next 00:00 UTC (ms) */
  resetsAt: number;
  /** seconds until then, at least 1: a 429's Retry-After */
  retryAfterS: number;
}

/**
 * The refusal of a caller whose budget is spent, at `now`: "token ci's budget of $5.00/day is spent
 * ($5.03 today); it resets at 00:00 UTC (in 3 h 12 min)", with a hint naming the command that
 * changes it.
 */
export function budgetRefusal(caller: string, budgetUsd: number, spentUsd: number, now: number): BudgetRefusal {
  const resetsAt = nextUtcMidnight(now);
  const left = resetsAt - now;
  const token = caller.startsWith('token:');
  const name = token ? caller.slice('token:'.length) : caller;
  return {
    code: BUDGET_CODE,
    message: `${callerWords(caller)}'s budget of ${fmtBudget(budgetUsd)} is spent (${fmtUsd(spentUsd)} today); it resets at 00:00 UTC (in ${fmtWait(left)})`,
    hint: `Wait until 00:00 UTC, or have an admin raise the budget: aqven ${token ? 'token' : 'user'} budget ${name} ${Math.max(1, Math.ceil(budgetUsd * 2))}/day (or none).`,
    resetsAt,
    retryAfterS: Math.max(1, Math.ceil(left / 1000)),
  };
}
