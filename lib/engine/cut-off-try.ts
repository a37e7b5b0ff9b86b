// A try sent and cut off before its answer was read (DESIGN: Storage, "Write-ahead"): the run was
// stopped, or its process died after the try's start was committed. The provider may have
// answered — and billed — so the try is recorded, and its attempt counts as an answer of its model
// when the node goes on (lib/engine/prior-answers.ts). One home for its shape: the recorder of a
// stopped run and the sweep of a dead one (db/run-store/cut-off.ts) both write it.
import type { TryRecord } from './types';

/**
 * Try `tryNo`, sent at `at`, cut off at `finishedAt`; `generationId`, what its reply's headers named
 * (OpenRouter's): its usage is looked up later (lib/flow/usage-lookup.ts), as for any answer not read to its end.
 */
export const cutOffTry = (t: { tryNo: number; at: number; generationId?: string | null }, finishedAt: number): TryRecord => ({
  tryNo: t.tryNo,
  status: null,
  error: 'cut_off',
  retryAfterMs: null,
  waitedMs: 0,
  startedAt: t.at,
  finishedAt: Math.max(finishedAt, t.at),
  generationId: t.generationId ?? null,
});

/** whether a stored attempt with no outcome was cut off with a try in flight: the provider may have answered */
export const cutOffInFlight = (a: { outcome: unknown; tries: readonly Pick<TryRecord, 'error'>[] }): boolean => a.outcome === null && a.tries.at(-1)?.error === 'cut_off';
