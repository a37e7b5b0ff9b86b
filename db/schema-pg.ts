// Storage schema for PostgreSQL (DESIGN: Storage): the same tables, columns, keys and indexes as
// db/schema.ts (SQLite), written side by side; db/schema-dialects.test.ts proves they match, column
// by column, including the row types the app reads. Change both files together, then run
// `npm run db:generate` (it writes drizzle/ and drizzle/pg/).
//
// Types: SQLite's integer is 64-bit, so times (integer ms since epoch), waits in ms and token counts
// are `bigint` read as a JS number (`mode: 'number'`, exact up to 2^53); small counters (turn, seq,
// try_no, HTTP status, revision, fence, pid) are `integer`. Costs are `double precision` (SQLite's
// real). Flags are `boolean` (SQLite stores 0/1; drizzle reads both as true/false). JSON columns are
// `json`, not `jsonb`: it keeps the text as written (key order, as the request was sent), and
// nothing queries inside it.
import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, doublePrecision, index, integer, json, pgTable, primaryKey, text, uniqueIndex, type AnyPgColumn } from 'drizzle-orm/pg-core';

type AnyRunId = AnyPgColumn;

/** integer ms since epoch, or a duration / count that may pass 2^31 */
const big = (name: string) => bigint(name, { mode: 'number' });

export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    project: text('project').notNull(),
    flow: text('flow').notNull(),
    /** queued: waiting for a worker (PostgreSQL mode); cancelled: taken off the queue before it started */
    status: text('status', { enum: ['queued', 'running', 'succeeded', 'failed', 'interrupted', 'cancelled'] }).notNull(),
    input: json('input'),
    output: json('output'),
    errorCode: text('error_code'),
    errorNode: text('error_node'),
    errorMessage: text('error_message'),
    /** hint of the failing node, so the run header can show it without a join */
    errorHint: text('error_hint'),
    turns: integer('turns').notNull().default(0),
    inputTokens: big('input_tokens').notNull().default(0),
    outputTokens: big('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    /** process id of the process that started the run; informational only (a pid is reused), never read */
    pid: integer('pid'),
    /** lease of a running run (db/run-lease.ts): the owning process's random id */
    owner: text('owner'),
    /** fencing token: bumped whenever the run changes hands (taken over, swept); every write of the run checks it */
    fence: integer('fence').notNull().default(0),
    /** last lease renewal by the owner */
    heartbeatAt: big('heartbeat_at'),
    /** past this, the run's owner is presumed dead and a sweep marks the run interrupted */
    leaseExpiresAt: big('lease_expires_at'),
    startedAt: big('started_at').notNull(),
    finishedAt: big('finished_at'),
    /** the project snapshot the run ran under (PostgreSQL mode); null when the project is a folder */
    snapshotId: integer('snapshot_id'),
    /** when the run was enqueued (PostgreSQL mode); null for a run started in-process */
    queuedAt: big('queued_at'),
    /** who started it: a user's name, `token:<name>`, or `cli:<login>`; null in runs recorded before */
    startedBy: text('started_by'),
    /** sha256 of the project's files as the run loaded them (DESIGN: Storage): which policy it ran under */
    projectHash: text('project_hash'),
    /**
     * flow: a run of a flow (every statistic, failure group and what-if estimate counts these only);
     * replay: one node run again under today's files (replay_of, replay_node); limits: a structural-limits probe
     */
    kind: text('kind', { enum: ['flow', 'replay', 'limits'] })
      .notNull()
      .default('flow'),
    /** the run a replay re-ran a node of; null once that run is purged */
    replayOf: text('replay_of').references((): AnyRunId => runs.id, { onDelete: 'set null' }),
    /** the node id (of the flow) a replay re-ran */
    replayNode: text('replay_node'),
    /** the trace the run's spans are in (DESIGN: Observability, "Traces"): its caller's, else the one this process's tracer opened; null when neither */
    traceId: text('trace_id'),
    /** the caller's span the run continues: the W3C traceparent given to POST /api/runs (as version 00), kept for the worker that runs it */
    traceparent: text('traceparent'),
  },
  (t) => [
    index('runs_started_at_idx').on(t.startedAt),
    index('runs_kind_idx').on(t.kind, t.startedAt),
    index('runs_replay_of_idx').on(t.replayOf),
    index('runs_status_idx').on(t.status, t.startedAt),
    index('runs_flow_idx').on(t.flow, t.startedAt),
    // the short id is the start of the id's last group (lib/shared/short-id.ts): looked up in this
    index('runs_id_tail_idx').on(sql`substr(${t.id}, 25)`),
  ],
);
export type RunRow = typeof runs.$inferSelect;

export const nodeRuns = pgTable(
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
    output: json('output'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    hint: text('hint'),
    policy: json('policy'),
    inputTokens: big('input_tokens').notNull().default(0),
    outputTokens: big('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    startedAt: big('started_at'),
    finishedAt: big('finished_at'),
    /** the node's place in its flow: nodes of a run are listed by (turn, ord) */
    ord: integer('ord').notNull().default(0),
    /** a failed node's failure signature (lib/shared/failure-signature.ts); null otherwise */
    failureSig: text('failure_sig'),
  },
  (t) => [
    index('node_runs_run_idx').on(t.runId, t.turn),
    index('node_runs_agent_idx').on(t.agent, t.runId),
    // an agent's nodes over the last minutes: the failure_share alert (db/alert-queries.ts)
    index('node_runs_agent_started_idx').on(t.agent, t.startedAt),
    index('node_runs_failure_idx')
      .on(t.failureSig, t.startedAt)
      .where(sql`failure_sig IS NOT NULL`),
  ],
);
export type NodeRunRow = typeof nodeRuns.$inferSelect;

export const attempts = pgTable(
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
    /** an ok answer whose finish reason decided nothing: "unrecognised finish reason `eos`", "no finish reason" */
    finishNote: text('finish_note'),
    cause: text('cause'),
    action: text('action'),
    request: json('request'),
    responseText: text('response_text'),
    errorKind: text('error_kind'),
    errorMessage: text('error_message'),
    errorDetail: text('error_detail'),
    validationErrors: json('validation_errors'),
    discarded: boolean('discarded').notNull().default(false),
    streamedText: text('streamed_text'),
    inputTokens: big('input_tokens').notNull().default(0),
    outputTokens: big('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    /** a reply not read to its end (size limit, timeout, break after the headers): the tokens above are a lower bound */
    usageUnknown: boolean('usage_unknown').notNull().default(false),
    startedAt: big('started_at').notNull(),
    finishedAt: big('finished_at'),
    /** a failed or dropped attempt's failure signature (lib/shared/failure-signature.ts); null for an answer kept */
    failureSig: text('failure_sig'),
    /** reasoning tokens the provider stated apart, part of output_tokens; null: none stated */
    reasoningTokens: big('reasoning_tokens'),
    /** whose price cost_usd is: 'provider' (its stated charge), 'catalogue'; null: neither — unknown when there are tokens */
    costSource: text('cost_source'),
    /** write-ahead (DESIGN: Storage, "Write-ahead"): the try about to be sent, committed before it leaves, and when; null once the attempt ends */
    inFlightTry: integer('in_flight_try'),
    inFlightAt: big('in_flight_at'),
    /** the generation id the in-flight try's headers named (OpenRouter's x-generation-id), so a try cut off by a dead process can have its usage looked up */
    inFlightGeneration: text('in_flight_generation'),
  },
  (t) => [
    index('attempts_failure_idx')
      .on(t.failureSig, t.startedAt)
      .where(sql`failure_sig IS NOT NULL`),
    index('attempts_node_run_idx').on(t.nodeRunId, t.seq),
    index('attempts_run_idx').on(t.runId),
    index('attempts_model_idx').on(t.model, t.runId),
    // partial: most attempts are ok with action none, and skip these pages entirely
    index('attempts_cause_idx')
      .on(t.cause, t.runId)
      .where(sql`cause IS NOT NULL`),
    index('attempts_action_idx')
      .on(t.action, t.runId)
      .where(sql`action IN ('retry', 'repair', 'fallback')`),
  ],
);
export type AttemptRow = typeof attempts.$inferSelect;

export const transportTries = pgTable(
  'transport_tries',
  {
    // by default, not always: `aqven db copy` inserts SQLite's ids as they are
    id: big('id').primaryKey().generatedByDefaultAsIdentity(),
    attemptId: text('attempt_id')
      .notNull()
      .references(() => attempts.id, { onDelete: 'cascade' }),
    tryNo: integer('try_no').notNull(),
    status: integer('status'),
    error: text('error'),
    retryAfterMs: big('retry_after_ms'),
    waitedMs: big('waited_ms').notNull().default(0),
    /** text a stream delivered before its connection broke (redacted); the next try starts afresh */
    discardedText: text('discarded_text'),
    startedAt: big('started_at').notNull(),
    finishedAt: big('finished_at').notNull(),
    /** the provider's generation id of a 2xx reply not read to its end (OpenRouter's x-generation-id); null otherwise */
    generationId: text('generation_id'),
    /** the lookup of that reply's usage (DESIGN: Usage unknown, never zero): null (none), pending, found, gave_up */
    usageLookup: text('usage_lookup', { enum: ['pending', 'found', 'gave_up'] }),
    /** lookups claimed so far */
    lookupCount: integer('lookup_count').notNull().default(0),
    /** ms: the next lookup is due then (a claimed one: when its claim lapses); null unless pending */
    lookupAfter: big('lookup_after'),
    /** the usage the provider reported when looked up (found); null before */
    inputTokens: big('input_tokens'),
    outputTokens: big('output_tokens'),
    costUsd: doublePrecision('cost_usd'),
  },
  (t) => [
    index('transport_tries_attempt_idx').on(t.attemptId, t.tryNo),
    // partial: only cut-off answers of a router that names its generations are ever pending
    index('transport_tries_lookup_idx')
      .on(t.lookupAfter)
      .where(sql`lookup_after IS NOT NULL`),
  ],
);
export type TransportTryRow = typeof transportTries.$inferSelect;

/** Streamed text of an attempt in flight (see db/schema.ts). */
export const streamChunks = pgTable(
  'stream_chunks',
  {
    attemptId: text('attempt_id')
      .notNull()
      .references(() => attempts.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    text: text('text').notNull(),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.seq] })],
);
export type StreamChunkRow = typeof streamChunks.$inferSelect;

export const rateLimitPauses = pgTable('rate_limit_pauses', {
  model: text('model').primaryKey(),
  /** never more than on_rate_limit.max_wait after set_at (DESIGN: Transport retry and rate limits) */
  pausedUntil: big('paused_until').notNull(),
  reason: text('reason').notNull(),
  // the pause's origin, shown on /providers; null in rows written before they were recorded
  /** when the 429 arrived */
  setAt: big('set_at'),
  /** the server's wait as sent, e.g. `retry-after: Fri, 31 Dec 9999 23:59:59 GMT`; null = none (backoff) */
  serverWait: text('server_wait'),
  /** the wait asked for, ms (may far exceed the pause) */
  askedMs: big('asked_ms'),
  /** on_rate_limit.max_wait when the pause was set: the pause was capped when asked_ms exceeds it */
  maxWaitMs: big('max_wait_ms'),
  /** the process sending the one probe after the pause (a cluster-wide claim); null = no probe out */
  probeOwner: text('probe_owner'),
  /** the probe's claim lapses here (its owner died mid-call): another process may probe */
  probeUntil: big('probe_until'),
});
export type RateLimitPauseRow = typeof rateLimitPauses.$inferSelect;

export const policyRevisions = pgTable(
  'policy_revisions',
  {
    id: big('id').primaryKey().generatedByDefaultAsIdentity(),
    agent: text('agent').notNull(),
    revision: integer('revision').notNull(),
    yaml: text('yaml').notNull(),
    diff: text('diff').notNull(),
    createdAt: big('created_at').notNull(),
    /** who saved it: a user, a token's name, or cli:<login> */
    author: text('author'),
    /** the project snapshot this save created (PostgreSQL mode) */
    snapshotId: integer('snapshot_id'),
  },
  (t) => [index('policy_revisions_agent_idx').on(t.agent, t.revision)],
);
export type PolicyRevisionRow = typeof policyRevisions.$inferSelect;

/**
 * The project's files as versioned snapshots (DESIGN: Storage, "The project in the database"):
 * in PostgreSQL mode every worker and dashboard runs the newest one. `files` maps each path under
 * the project folder to its text, byte for byte; `hash` (sha256 of the sorted paths and texts)
 * makes a push of unchanged files a no-op.
 */
export const projectSnapshots = pgTable(
  'project_snapshots',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    files: json('files').notNull(),
    hash: text('hash').notNull(),
    /** who made it: a user, a token's name, or cli:<login> */
    author: text('author'),
    /** what made it: "push", "policy <agent>" */
    note: text('note'),
    createdAt: big('created_at').notNull(),
  },
  (t) => [index('project_snapshots_created_idx').on(t.createdAt)],
);
export type ProjectSnapshotRow = typeof projectSnapshots.$inferSelect;

/** Worker processes (DESIGN: Workers): each writes its row when it starts and every heartbeat; `aqven db status` lists those seen lately. */
export const workers = pgTable('workers', {
  id: text('id').primaryKey(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  concurrency: integer('concurrency').notNull(),
  /** runs in progress at the last heartbeat */
  running: integer('running').notNull().default(0),
  startedAt: big('started_at').notNull(),
  seenAt: big('seen_at').notNull(),
  stoppedAt: big('stopped_at'),
});
export type WorkerRow = typeof workers.$inferSelect;

// ── Team access (DESIGN: The dashboard, "Accounts, roles and tokens") ───────────────────────────
// better-auth's four tables in its field names. Its times are Dates: stored as bigint ms like every
// other time here, converted at the driver edge.

/** integer ms since epoch, read and written as a Date (better-auth's tables); SQLite: timestamp_ms */
const at = customType<{ data: Date; driverData: string | number }>({
  dataType: () => 'bigint',
  toDriver: (d) => d.getTime(),
  fromDriver: (v) => new Date(Number(v)),
});

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    emailVerified: boolean('email_verified').notNull().default(false),
    image: text('image'),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] })
      .notNull()
      .default('viewer'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
    /** when the user was last seen signing in, out, or with a session that was then revoked; `aqven user list` shows the later of this and their newest session */
    lastSeenAt: at('last_seen_at'),
    budgetUsdPerDay: doublePrecision('budget_usd_per_day'),
  },
  (t) => [uniqueIndex('users_name_idx').on(t.name), uniqueIndex('users_email_idx').on(t.email)],
);
export type UserRow = typeof users.$inferSelect;

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    token: text('token').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: at('expires_at').notNull(),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [uniqueIndex('sessions_token_idx').on(t.token), index('sessions_user_idx').on(t.userId)],
);
export type SessionRow = typeof sessions.$inferSelect;

export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    providerId: text('provider_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    accessToken: text('access_token'),
    refreshToken: text('refresh_token'),
    idToken: text('id_token'),
    accessTokenExpiresAt: at('access_token_expires_at'),
    refreshTokenExpiresAt: at('refresh_token_expires_at'),
    scope: text('scope'),
    password: text('password'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [index('accounts_user_idx').on(t.userId)],
);
export type AccountRow = typeof accounts.$inferSelect;

export const verifications = pgTable(
  'verifications',
  {
    id: text('id').primaryKey(),
    identifier: text('identifier').notNull(),
    value: text('value').notNull(),
    expiresAt: at('expires_at').notNull(),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (t) => [index('verifications_identifier_idx').on(t.identifier)],
);

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    createdBy: text('created_by'),
    createdAt: big('created_at').notNull(),
    lastUsedAt: big('last_used_at'),
    revokedAt: big('revoked_at'),
    expiresAt: big('expires_at'),
    budgetUsdPerDay: doublePrecision('budget_usd_per_day'),
    scope: text('scope', { enum: ['metrics'] }),
  },
  (t) => [uniqueIndex('api_tokens_name_idx').on(t.name), uniqueIndex('api_tokens_hash_idx').on(t.tokenHash)],
);
export type ApiTokenRow = typeof apiTokens.$inferSelect;

export const requestLimits = pgTable('request_limits', {
  key: text('key').primaryKey(),
  windowStart: big('window_start').notNull(),
  count: integer('count').notNull(),
});
export type RequestLimitRow = typeof requestLimits.$inferSelect;

export const callerSpend = pgTable(
  'caller_spend',
  {
    caller: text('caller').notNull(),
    day: text('day').notNull(),
    usd: doublePrecision('usd').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.caller, t.day] })],
);
export type CallerSpendRow = typeof callerSpend.$inferSelect;

export const auditEvents = pgTable(
  'audit_events',
  {
    id: text('id').primaryKey(),
    at: big('at').notNull(),
    kind: text('kind').notNull(),
    actor: text('actor'),
    address: text('address'),
    target: text('target'),
    detail: text('detail'),
  },
  (t) => [index('audit_events_at_idx').on(t.at), index('audit_events_actor_idx').on(t.actor, t.at), index('audit_events_kind_idx').on(t.kind, t.at)],
);
export type AuditEventRow = typeof auditEvents.$inferSelect;

export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

// ── Team debugging (DESIGN: Storage, "Notes, search and daily statistics") ──────────────────────

/** A team member's note on a run, one of its nodes, or one attempt (markdown, rendered as text-safe HTML). */
export const notes = pgTable(
  'notes',
  {
    id: big('id').primaryKey().generatedByDefaultAsIdentity(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    /** the node run noted; null for a note on the whole run */
    nodeRunId: text('node_run_id').references(() => nodeRuns.id, { onDelete: 'cascade' }),
    /** the attempt noted; null for a note on a run or a node */
    attemptId: text('attempt_id').references(() => attempts.id, { onDelete: 'cascade' }),
    /** who wrote it: a user's name (only they may edit or delete it) */
    author: text('author').notNull(),
    body: text('body').notNull(),
    createdAt: big('created_at').notNull(),
    updatedAt: big('updated_at').notNull(),
  },
  (t) => [
    index('notes_run_idx').on(t.runId, t.createdAt),
    // the cascade from a deleted node run or attempt (run purge) looks notes up by these
    index('notes_node_run_idx').on(t.nodeRunId),
    index('notes_attempt_idx').on(t.attemptId),
  ],
);
export type NoteRow = typeof notes.$inferSelect;

/**
 * The searchable text of the run history, one row per run input, node output and (redacted)
 * failure text, written by the run store with the facts it comes from. The full-text index over
 * `body` is the dialect's own and lives in hand-written migration SQL: an FTS5 table `search_fts`
 * (external content, fed in batches by db/search-index.ts) on SQLite; on PostgreSQL a stored
 * generated column `body_tsv` (`to_tsvector('simple', body)`) with a GIN index, described in
 * db/search-index.ts.
 */
export const searchDocs = pgTable(
  'search_docs',
  {
    id: big('id').primaryKey().generatedByDefaultAsIdentity(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    nodeRunId: text('node_run_id'),
    attemptId: text('attempt_id'),
    /** input: the run's input; output: a node's output; error: an attempt's or a node's failure text */
    field: text('field', { enum: ['input', 'output', 'error'] }).notNull(),
    body: text('body').notNull(),
    /** when the text was written (ms), for newest-first results */
    at: big('at').notNull(),
  },
  (t) => [index('search_docs_run_idx').on(t.runId)],
);
export type SearchDocRow = typeof searchDocs.$inferSelect;

/**
 * Finished attempts of `flow` runs summed per agent, UTC day, model, outcome, cause and action,
 * kept up to date by the run store as attempts finish: /agents reads these instead of scanning
 * every attempt. `cause` and `action` are '' where the attempt has none.
 */
export const agentDaily = pgTable(
  'agent_daily',
  {
    agent: text('agent').notNull(),
    /** start of the UTC day, ms */
    day: big('day').notNull(),
    model: text('model').notNull(),
    outcome: text('outcome').notNull(),
    cause: text('cause').notNull(),
    action: text('action').notNull(),
    attempts: big('attempts').notNull().default(0),
    inputTokens: big('input_tokens').notNull().default(0),
    outputTokens: big('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    /** sum of (finished_at - started_at) over these attempts, ms */
    durationMs: big('duration_ms').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.agent, t.day, t.model, t.outcome, t.cause, t.action] })],
);
export type AgentDailyRow = typeof agentDaily.$inferSelect;

/** Finished node runs of `flow` runs per agent, UTC day and final status (succeeded, failed, skipped). */
export const nodeDaily = pgTable(
  'node_daily',
  {
    agent: text('agent').notNull(),
    day: big('day').notNull(),
    status: text('status').notNull(),
    nodes: big('nodes').notNull().default(0),
    /** the newest node start counted here, ms */
    lastStartedAt: big('last_started_at'),
  },
  (t) => [primaryKey({ columns: [t.agent, t.day, t.status] })],
);
export type NodeDailyRow = typeof nodeDaily.$inferSelect;

/**
 * Failures of `flow` runs summed per signature and UTC day, kept by the run store as attempts and
 * nodes fail: /failures reads these (count, spend, first and last seen, the trend) and finds the
 * example runs through the indexed `failure_sig` columns. agent, model, code and message describe
 * the signature (the same on every row of one signature).
 */
export const failureDaily = pgTable(
  'failure_daily',
  {
    sig: text('sig').notNull(),
    day: big('day').notNull(),
    /** attempt: a failed or dropped attempt; node: a node that failed */
    level: text('level', { enum: ['attempt', 'node'] }).notNull(),
    agent: text('agent').notNull(),
    model: text('model').notNull(),
    code: text('code').notNull(),
    /** the normalised failure text */
    message: text('message').notNull(),
    failures: big('failures').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    firstAt: big('first_at').notNull(),
    lastAt: big('last_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sig, t.day] }), index('failure_daily_day_idx').on(t.day)],
);
export type FailureDailyRow = typeof failureDaily.$inferSelect;

// ── Structural limits (DESIGN: Structural limits, "Storage") ───────────────────────────────────

/**
 * A model's measured structural limit on one dimension (depth, list, enum) under one set of call
 * settings on one UTC date: `aqven limits` writes it level by level, and a later run with the same
 * settings on the same date resumes the row. `check` and the dashboard read the newest per model.
 */
export const modelLimits = pgTable(
  'model_limits',
  {
    id: big('id').primaryKey().generatedByDefaultAsIdentity(),
    /** the `provider:model-id` string, as in agent files */
    model: text('model').notNull(),
    dimension: text('dimension', { enum: ['depth', 'list', 'enum'] }).notNull(),
    /** short hash of the canonical call settings (lib/limits/settings.ts) */
    settingsKey: text('settings_key').notNull(),
    /** the call settings measured under: trials, threshold, max tokens, strict: false */
    settings: json('settings').notNull(),
    /** YYYY-MM-DD (UTC) */
    measuredOn: text('measured_on').notNull(),
    /** partial: stopped by a budget, Ctrl-C or an error; a later run resumes it */
    status: text('status', { enum: ['running', 'complete', 'partial'] }).notNull(),
    /** the last level whose first-try valid rate reached the threshold */
    lastHeld: integer('last_held'),
    /** the first level below it; null while no level failed */
    firstFailed: integer('first_failed'),
    /** the levels measured, in the order measured (lib/shared/limits-types.ts LimitLevel) */
    levels: json('levels').notNull(),
    calls: integer('calls').notNull().default(0),
    inputTokens: big('input_tokens').notNull().default(0),
    outputTokens: big('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    /** the limits run (runs.kind = 'limits') of the latest measurement; null once purged */
    runId: text('run_id').references(() => runs.id, { onDelete: 'set null' }),
    startedAt: big('started_at').notNull(),
    updatedAt: big('updated_at').notNull(),
  },
  (t) => [uniqueIndex('model_limits_key_idx').on(t.model, t.dimension, t.settingsKey, t.measuredOn), index('model_limits_model_idx').on(t.model, t.updatedAt)],
);
export type ModelLimitRow = typeof modelLimits.$inferSelect;

// ── Replay batches (DESIGN: The dashboard, "Replay with the current policy") ──────────────────

/** A bulk replay of a failure group and its progress (db/schema.ts says when it is written and read). */
export const replayBatches = pgTable(
  'replay_batches',
  {
    id: text('id').primaryKey(),
    /** what the batch replays: the failure group's signature */
    label: text('label').notNull(),
    /** who started it: a user's name, `token:<name>`; null without accounts */
    startedBy: text('started_by'),
    startedAt: big('started_at').notNull(),
    /** the owner's last write: progress or heartbeat */
    updatedAt: big('updated_at').notNull(),
    /** null while it runs */
    finishedAt: big('finished_at'),
    /** the random id of the process running it (db/run-lease.ts PROCESS_OWNER) */
    owner: text('owner').notNull(),
    total: integer('total').notNull(),
    /** replays that now succeed */
    succeeded: integer('succeeded').notNull().default(0),
    spentUsd: doublePrecision('spent_usd').notNull().default(0),
    /** the batch's cost cap; null: none */
    capUsd: doublePrecision('cap_usd'),
    /** why it stopped before its end; null when it went through (or still runs) */
    stopped: text('stopped'),
    /** the whole progress as the batch last saw it (lib/flow/replay.ts BatchProgress) */
    progress: json('progress').notNull(),
  },
  (t) => [index('replay_batches_started_idx').on(t.startedAt), index('replay_batches_label_idx').on(t.label, t.startedAt)],
);
export type ReplayBatchRow = typeof replayBatches.$inferSelect;

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    caller: text('caller').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    runId: text('run_id').references((): AnyRunId => runs.id, { onDelete: 'cascade' }),
    createdAt: big('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index('idempotency_keys_run_idx').on(t.runId), index('idempotency_keys_created_idx').on(t.createdAt)],
);
export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Alerts sent when a failure starts (docs/monitoring.md, "Alerts"; lib/observe/alerts/): one row per
 * alert key (`new_failure:<sig>`, `failure_share:<agent>`, `model_paused:<model>`, `queue_wait`), the
 * latest firing. The insert decides who fires: it succeeds only for a new key or one whose cool-down
 * is over, so processes evaluating the same failure at once send it once. Then the delivery is
 * recorded on the row: tries, the outcome, the last error (redacted, never the webhook URL).
 */
export const alerts = pgTable(
  'alerts',
  {
    key: text('key').primaryKey(),
    rule: text('rule', { enum: ['new_failure', 'failure_share', 'model_paused', 'queue_wait'] }).notNull(),
    agent: text('agent'),
    model: text('model'),
    sig: text('sig'),
    summary: text('summary').notNull(),
    firedAt: big('fired_at').notNull(),
    coolUntil: big('cool_until').notNull(),
    timesFired: integer('times_fired').notNull().default(1),
    status: text('status', { enum: ['fired', 'delivered', 'failed'] }).notNull(),
    tries: integer('tries').notNull().default(0),
    lastError: text('last_error'),
    deliveredAt: big('delivered_at'),
  },
  (t) => [index('alerts_sig_idx').on(t.sig)],
);
export type AlertRow = typeof alerts.$inferSelect;
