// What the run history feeds besides its facts (DESIGN: Storage, "Notes, search and daily
// statistics"): the searchable text of a run, the daily sums /agents reads and the failure
// signatures /failures groups by. One home for each rule, shared by the run store (as facts are
// written), the sweep (nodes of dead runs) and the backfill of older histories (db/backfill.ts), so
// that a history recorded live and one backfilled give the same rows.
import { sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { ValidationIssue } from '@/lib/engine/types';
import { failureSignature, type FailureSignature } from '@/lib/shared/failure-signature';
import { excluded } from './typed-sql';
import type { AgentDailyRow, FailureDailyRow, NodeDailyRow } from './schema';
import type { Db, Orm, Tables } from './types';

// the daily tables key each row by the start of its UTC day
import { utcDay } from '@/lib/shared/utc-day';
export { DAY_MS, utcDay } from '@/lib/shared/utc-day';

/**
 * Longest body of a search document, in characters (8 KiB of ASCII): a search finds a run by the
 * start of its texts; the whole text stays on its own row. The same bound cuts live and backfilled
 * bodies (substr / left count characters too).
 */
export const SEARCH_BODY_MAX = 8192;

/** validation messages are appended to an attempt's failure text only while they fit in this much */
export const SEARCH_ISSUES_MAX = 1024;

export const capSearchBody = (text: string): string => (text.length > SEARCH_BODY_MAX ? text.slice(0, SEARCH_BODY_MAX) : text);

/**
 * A run's input or a node's output as searched: text as it is, any other JSON value as JSON text
 * (`json`: that text, when the caller made it already); null for none.
 */
export function valueSearchText(value: unknown, json?: string | null): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : (json ?? JSON.stringify(value));
  return text ? capSearchBody(text) : null;
}

/** One stored validation issue as searched: `pointer message`, the root named */
export const issueText = (i: ValidationIssue): string => `${i.pointer || '(root)'} ${i.message}`;

/**
 * A failed attempt's searchable text: its stored (redacted) error message, then its stored
 * validation issues, one a line, when they are short; null when it has none.
 */
export function attemptErrorText(message: string | null | undefined, issues: readonly ValidationIssue[] | null | undefined): string | null {
  const list = issues?.length ? issues.map(issueText).join('\n') : '';
  const parts = [message ?? '', list.length <= SEARCH_ISSUES_MAX ? list : ''].filter(Boolean);
  return parts.length ? capSearchBody(parts.join('\n')) : null;
}

/**
 * Whether a finished attempt counts as a failure (signed, summed in failure_daily, its text
 * searchable): its answer was not kept because of a cause — an error, refusal, truncation or
 * invalid output, whatever the policy did next (equivalently: discarded with an outcome). An
 * attempt cut off by a stopped run has no outcome and is not one: the stop is the node's failure.
 */
export const isFailedAttempt = (a: { outcome: string | null; cause: string | null }): boolean => a.outcome !== null && a.cause !== null;

/** The signature of a failed attempt (its cause is its code). */
export function attemptSignature(agent: string, a: { model: string; cause: string | null; errorMessage: string | null }): FailureSignature {
  return failureSignature({ level: 'attempt', agent, model: a.model, code: a.cause ?? '', message: a.errorMessage });
}

/** The signature of a failed node (its error code is its code; no model: its text names them). */
export function nodeSignature(agent: string, error: { code: string | null; message: string | null }): FailureSignature {
  return failureSignature({ level: 'node', agent, model: '', code: error.code ?? '', message: error.message });
}

// ── The daily sums, as upserts that add (correct under concurrent writers on PostgreSQL) ──────────

const plus = (col: AnySQLiteColumn): SQL => sql`${col} + ${excluded(col)}`;
/** the smaller of the stored and the proposed value (both non-null) */
const least = (col: AnySQLiteColumn): SQL => sql`CASE WHEN ${col} <= ${excluded(col)} THEN ${col} ELSE ${excluded(col)} END`;
/** the larger; a null on either side gives the other (SQLite's max(a, b) would give null) */
const greatest = (col: AnySQLiteColumn): SQL => sql`CASE WHEN ${excluded(col)} IS NULL OR ${col} >= ${excluded(col)} THEN ${col} ELSE ${excluded(col)} END`;

export function agentDailyUpsert(t: Tables) {
  const a = t.agentDaily;
  return {
    target: [a.agent, a.day, a.model, a.outcome, a.cause, a.action],
    set: { attempts: plus(a.attempts), inputTokens: plus(a.inputTokens), outputTokens: plus(a.outputTokens), costUsd: plus(a.costUsd), durationMs: plus(a.durationMs) },
  };
}

export function nodeDailyUpsert(t: Tables) {
  const n = t.nodeDaily;
  return { target: [n.agent, n.day, n.status], set: { nodes: plus(n.nodes), lastStartedAt: greatest(n.lastStartedAt) } };
}

export function failureDailyUpsert(t: Tables) {
  const f = t.failureDaily;
  return { target: [f.sig, f.day], set: { failures: plus(f.failures), costUsd: plus(f.costUsd), firstAt: least(f.firstAt), lastAt: greatest(f.lastAt) } };
}

/**
 * Sums of daily rows gathered before they are written: one upsert per key instead of one per fact
 * (a commit of many runs of one agent adds to few rows), written in key order so that concurrent
 * writers lock the rows they share in the same order.
 */
export class DailySums {
  readonly agents = new Map<string, AgentDailyRow>();
  readonly nodes = new Map<string, NodeDailyRow>();
  readonly failures = new Map<string, FailureDailyRow>();

  attempt(
    agent: string,
    a: {
      model: string;
      outcome: string;
      cause: string | null;
      action: string | null;
      inputTokens: number;
      outputTokens: number;
      costUsd: number;
      startedAt: number;
      finishedAt: number | null;
    },
  ): void {
    const day = utcDay(a.startedAt);
    const cause = a.cause ?? '';
    const action = a.action ?? 'none';
    const key = `${agent}\u0000${day}\u0000${a.model}\u0000${a.outcome}\u0000${cause}\u0000${action}`;
    let s = this.agents.get(key);
    if (!s) this.agents.set(key, (s = { agent, day, model: a.model, outcome: a.outcome, cause, action, attempts: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, durationMs: 0 }));
    s.attempts += 1;
    s.inputTokens += a.inputTokens;
    s.outputTokens += a.outputTokens;
    s.costUsd += a.costUsd;
    s.durationMs += a.finishedAt === null ? 0 : a.finishedAt - a.startedAt;
  }

  /** a node reached a final status; `at`: its start (or, never started, its end) */
  node(agent: string, status: string, at: number, startedAt: number | null): void {
    const day = utcDay(at);
    const key = `${agent}\u0000${day}\u0000${status}`;
    let s = this.nodes.get(key);
    if (!s) this.nodes.set(key, (s = { agent, day, status, nodes: 0, lastStartedAt: null }));
    s.nodes += 1;
    if (startedAt !== null && (s.lastStartedAt === null || startedAt > s.lastStartedAt)) s.lastStartedAt = startedAt;
  }

  failure(f: { sig: FailureSignature; level: 'attempt' | 'node'; agent: string; model: string; code: string; costUsd: number; at: number }): void {
    const day = utcDay(f.at);
    const key = `${f.sig.sig}\u0000${day}`;
    let s = this.failures.get(key);
    if (!s) {
      this.failures.set(
        key,
        (s = {
          sig: f.sig.sig,
          day,
          level: f.level,
          agent: f.agent,
          model: f.model,
          code: f.code,
          message: f.sig.normalised,
          failures: 0,
          costUsd: 0,
          firstAt: f.at,
          lastAt: f.at,
        }),
      );
    }
    s.failures += 1;
    s.costUsd += f.costUsd;
    if (f.at < s.firstAt) s.firstAt = f.at;
    if (f.at > s.lastAt) s.lastAt = f.at;
  }

  get empty(): boolean {
    return this.agents.size === 0 && this.nodes.size === 0 && this.failures.size === 0;
  }

  clear(): void {
    this.agents.clear();
    this.nodes.clear();
    this.failures.clear();
  }

  /** each table's rows in key order */
  rows() {
    const ordered = <V>(m: Map<string, V>): V[] => [...m.keys()].sort().map((k) => m.get(k)!);
    return { agents: ordered(this.agents), nodes: ordered(this.nodes), failures: ordered(this.failures) };
  }
}

/** Adds `sums` to the daily tables through `q` (the sweep's and the backfill's transaction), in key order. */
export async function writeDailySums(db: Db, q: Orm, sums: DailySums): Promise<void> {
  const { agents, nodes, failures } = sums.rows();
  const { agentDaily, failureDaily, nodeDaily } = db.t;
  // in chunks: a backfill's batch may hold many keys (PostgreSQL binds at most 65,535 parameters)
  const chunk = 500;
  for (let i = 0; i < agents.length; i += chunk)
    await q
      .insert(agentDaily)
      .values(agents.slice(i, i + chunk))
      .onConflictDoUpdate(agentDailyUpsert(db.t));
  for (let i = 0; i < nodes.length; i += chunk)
    await q
      .insert(nodeDaily)
      .values(nodes.slice(i, i + chunk))
      .onConflictDoUpdate(nodeDailyUpsert(db.t));
  for (let i = 0; i < failures.length; i += chunk)
    await q
      .insert(failureDaily)
      .values(failures.slice(i, i + chunk))
      .onConflictDoUpdate(failureDailyUpsert(db.t));
}
