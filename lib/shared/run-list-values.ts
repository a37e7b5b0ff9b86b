// Fixed values of the run list's filters, shared by the server's parser (lib/dashboard/run-filters.ts),
// the reads (db/queries.ts) and the filter form: no query is needed to list them.

/** The causes an attempt may end with (DESIGN: Outcome classification): the cause filter's choices. */
export const ATTEMPT_CAUSES = ['provider_error', 'refusal', 'truncated', 'invalid_output', 'quota'] as const;

/** The kinds of run (DESIGN: Storage, `runs.kind`): the kind filter's choices; absent, every kind is listed. */
export const RUN_KINDS = ['flow', 'replay', 'limits'] as const;
