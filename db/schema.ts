// Storage schema (DESIGN: Storage). Table and column names are a contract. Times are integer
// milliseconds since epoch; JSON columns hold text written by db/queries.
import { sql } from 'drizzle-orm';
import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const runs = sqliteTable(
  'runs',
  {
    id: text('id').primaryKey(),
    project: text('project').notNull(),
    flow: text('flow').notNull(),
    status: text('status', { enum: ['running', 'succeeded', 'failed', 'interrupted'] }).notNull(),
    input: text('input', { mode: 'json' }),
    output: text('output', { mode: 'json' }),
    errorCode: text('error_code'),
    errorNode: text('error_node'),
    errorMessage: text('error_message'),
    /** hint of the failing node, so the run header can show it without a join */
    errorHint: text('error_hint'),
    turns: integer('turns').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    /** process that owns a running run; used to mark runs of dead processes interrupted */
    pid: integer('pid'),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [
    index('runs_started_at_idx').on(t.startedAt),
    index('runs_status_idx').on(t.status, t.startedAt),
    index('runs_flow_idx').on(t.flow, t.startedAt),
  ],
);
export type RunRow = typeof runs.$inferSelect;

export const nodeRuns = sqliteTable(
  'node_runs',
  {
    id: text('id').primaryKey(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    nodeId: text('node_id').notNull(),
    agent: text('agent').notNull(),
    turn: integer('turn').notNull(),
    status: text('status', { enum: ['pending', 'running', 'succeeded', 'failed', 'skipped'] }).notNull(),
    output: text('output', { mode: 'json' }),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    hint: text('hint'),
    policy: text('policy', { mode: 'json' }),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    startedAt: integer('started_at'),
    finishedAt: integer('finished_at'),
  },
  (t) => [index('node_runs_run_idx').on(t.runId, t.turn), index('node_runs_agent_idx').on(t.agent, t.runId)],
);
export type NodeRunRow = typeof nodeRuns.$inferSelect;

export const attempts = sqliteTable(
  'attempts',
  {
    id: text('id').primaryKey(),
    nodeRunId: text('node_run_id')
      .notNull()
      .references(() => nodeRuns.id, { onDelete: 'cascade' }),
    /** denormalised so the run list can filter by model/cause without two joins */
    runId: text('run_id').notNull(),
    seq: integer('seq').notNull(),
    model: text('model').notNull(),
    chainIndex: integer('chain_index').notNull(),
    answerNo: integer('answer_no').notNull(),
    /** null while the attempt is in flight */
    outcome: text('outcome', { enum: ['ok', 'error', 'refusal', 'truncated'] }),
    finishReason: text('finish_reason'),
    /** OpenRouter's upstream value (e.g. MALFORMED_FUNCTION_CALL behind finish_reason "error") */
    nativeFinishReason: text('native_finish_reason'),
    cause: text('cause'),
    action: text('action'),
    request: text('request', { mode: 'json' }),
    responseText: text('response_text'),
    errorKind: text('error_kind'),
    errorMessage: text('error_message'),
    errorDetail: text('error_detail'),
    validationErrors: text('validation_errors', { mode: 'json' }),
    discarded: integer('discarded', { mode: 'boolean' }).notNull().default(false),
    streamedText: text('streamed_text'),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [
    index('attempts_node_run_idx').on(t.nodeRunId, t.seq),
    index('attempts_run_idx').on(t.runId),
    index('attempts_model_idx').on(t.model, t.runId),
    // partial: most attempts are ok with action none, and skip these pages entirely
    index('attempts_cause_idx').on(t.cause, t.runId).where(sql`cause IS NOT NULL`),
    index('attempts_action_idx').on(t.action, t.runId).where(sql`action IN ('retry', 'repair', 'fallback')`),
  ],
);
export type AttemptRow = typeof attempts.$inferSelect;

export const transportTries = sqliteTable(
  'transport_tries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    attemptId: text('attempt_id')
      .notNull()
      .references(() => attempts.id, { onDelete: 'cascade' }),
    tryNo: integer('try_no').notNull(),
    status: integer('status'),
    error: text('error'),
    retryAfterMs: integer('retry_after_ms'),
    waitedMs: integer('waited_ms').notNull().default(0),
    /** text a stream delivered before its connection broke (redacted); the next try starts afresh */
    discardedText: text('discarded_text'),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at').notNull(),
  },
  (t) => [index('transport_tries_attempt_idx').on(t.attemptId, t.tryNo)],
);
export type TransportTryRow = typeof transportTries.$inferSelect;

export const rateLimitPauses = sqliteTable('rate_limit_pauses', {
  model: text('model').primaryKey(),
  pausedUntil: integer('paused_until').notNull(),
  reason: text('reason').notNull(),
});
export type RateLimitPauseRow = typeof rateLimitPauses.$inferSelect;

export const policyRevisions = sqliteTable(
  'policy_revisions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    agent: text('agent').notNull(),
    revision: integer('revision').notNull(),
    yaml: text('yaml').notNull(),
    diff: text('diff').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('policy_revisions_agent_idx').on(t.agent, t.revision)],
);
export type PolicyRevisionRow = typeof policyRevisions.$inferSelect;
