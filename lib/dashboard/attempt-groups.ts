// How the run page lists a node's attempts (DESIGN: The dashboard, "Attempts"): identical attempts
// in a row collapse into one line ("×5"), a "failed only" view hides the ok answers, and a node
// with many attempts is shown as a compact table instead of one card per attempt. Pure.
import { outcomeKey, type AttemptFacts } from './run-view';

/** Above this many attempts (after the "failed only" filter) a node lists them as a table. */
export const TABLE_ABOVE = 6;

export interface AttemptGroup {
  /** the first attempt's seq: stable while a live run adds attempts after the group */
  key: number;
  attempts: AttemptFacts[];
}

/**
 * What makes two attempts "the same" to a reader: the model, how it ended (outcome, cause,
 * finish reason, what the engine did next) and the error it left, validation errors included.
 * Usage, times and the answer number differ between repeats and are shown per attempt when expanded.
 */
export function repeatKey(a: AttemptFacts): string {
  return JSON.stringify([
    a.model,
    outcomeKey(a),
    a.cause,
    a.action,
    a.finishReason,
    a.error?.kind ?? null,
    a.error?.message ?? null,
    a.validationErrors.map((v) => [v.pointer, v.message]),
  ]);
}

/** Runs of identical attempts in a row, in order; an attempt still in flight is never folded into one. */
export function collapseRepeats(attempts: AttemptFacts[]): AttemptGroup[] {
  const groups: AttemptGroup[] = [];
  let prevKey: string | null = null;
  for (const a of attempts) {
    const k = a.outcome == null ? null : repeatKey(a);
    const last = groups[groups.length - 1];
    if (last && k !== null && k === prevKey) last.attempts.push(a);
    else groups.push({ key: a.seq, attempts: [a] });
    prevKey = k;
  }
  return groups;
}

/** An attempt that did not end with a valid answer (an attempt in flight is kept: it has not ended). */
export function isFailedAttempt(a: AttemptFacts): boolean {
  return outcomeKey(a) !== 'ok';
}

/** The attempts the "failed only" view shows. */
export function failedOnly(attempts: AttemptFacts[]): AttemptFacts[] {
  return attempts.filter(isFailedAttempt);
}

/** "#3", or "#3–#7" for a group. */
export function seqRange(g: AttemptGroup): string {
  const first = g.attempts[0]!.seq;
  const last = g.attempts[g.attempts.length - 1]!.seq;
  return first === last ? `#${first}` : `#${first}–#${last}`;
}
