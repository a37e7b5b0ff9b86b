// Storage schema (DESIGN: Storage). Table and column names are a contract. Times are integer
// milliseconds since epoch; JSON columns hold text written by db/queries.
// The same schema for PostgreSQL is db/schema-pg.ts: change both (db/schema-dialects.test.ts checks
// they match), then `npm run db:generate` (SQLite → drizzle/, PostgreSQL → drizzle/pg/).
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from 'drizzle-orm/sqlite-core';

type AnyRunId = AnySQLiteColumn;

export const runs = sqliteTable(
  'runs',
  {
    id: text('id').primaryKey(),
    project: text('project').notNull(),
    flow: text('flow').notNull(),
    /** queued: waiting for a worker (PostgreSQL mode); cancelled: taken off the queue before it started */
    status: text('status', { enum: ['queued', 'running', 'succeeded', 'failed', 'interrupted', 'cancelled'] }).notNull(),
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
    /** process id of the process that started the run; informational only (a pid is reused), never read */
    pid: integer('pid'),
    /** lease of a running run (db/run-lease.ts): the owning process's random id */
    owner: text('owner'),
    /** fencing token: bumped whenever the run changes hands (taken over, swept); every write of the run checks it */
    fence: integer('fence').notNull().default(0),
    /** last lease renewal by the owner */
    heartbeatAt: integer('heartbeat_at'),
    /** past this, the run's owner is presumed dead and a sweep marks the run interrupted */
    leaseExpiresAt: integer('lease_expires_at'),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    /** the project snapshot the run ran under (PostgreSQL mode); null when the project is a folder */
    snapshotId: integer('snapshot_id'),
    /** when the run was enqueued (PostgreSQL mode); null for a run started in-process */
    queuedAt: integer('queued_at'),
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
    /** an ok answer whose finish reason decided nothing: "unrecognised finish reason `eos`", "no finish reason" */
    finishNote: text('finish_note'),
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
    /** a reply not read to its end (size limit, timeout, break after the headers): the tokens above are a lower bound */
    usageUnknown: integer('usage_unknown', { mode: 'boolean' }).notNull().default(false),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    /** a failed or dropped attempt's failure signature (lib/shared/failure-signature.ts); null for an answer kept */
    failureSig: text('failure_sig'),
    /** reasoning tokens the provider stated apart, part of output_tokens; null: none stated */
    reasoningTokens: integer('reasoning_tokens'),
    /** whose price cost_usd is: 'provider' (its stated charge), 'catalogue'; null: neither — unknown when there are tokens */
    costSource: text('cost_source'),
    /** write-ahead (DESIGN: Storage, "Write-ahead"): the try about to be sent, committed before it leaves, and when; null once the attempt ends */
    inFlightTry: integer('in_flight_try'),
    inFlightAt: integer('in_flight_at'),
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
    /** the provider's generation id of a 2xx reply not read to its end (OpenRouter's x-generation-id); null otherwise */
    generationId: text('generation_id'),
    /** the lookup of that reply's usage (DESIGN: Usage unknown, never zero): null (none), pending, found, gave_up */
    usageLookup: text('usage_lookup', { enum: ['pending', 'found', 'gave_up'] }),
    /** lookups claimed so far */
    lookupCount: integer('lookup_count').notNull().default(0),
    /** ms: the next lookup is due then (a claimed one: when its claim lapses); null unless pending */
    lookupAfter: integer('lookup_after'),
    /** the usage the provider reported when looked up (found); null before */
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    costUsd: real('cost_usd'),
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

/**
 * Streamed text of an attempt in flight, in the order it arrived (DESIGN: Streaming, Storage): one
 * row per batch, already redacted, appended in linear time and read joined by `seq`. The finished
 * attempt's text goes to attempts.streamed_text and its rows are deleted; a cut-off attempt's rows
 * are joined into streamed_text by the recovery that closes it.
 */
export const streamChunks = sqliteTable(
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

export const rateLimitPauses = sqliteTable('rate_limit_pauses', {
  model: text('model').primaryKey(),
  /** never more than on_rate_limit.max_wait after set_at (DESIGN: Transport retry and rate limits) */
  pausedUntil: integer('paused_until').notNull(),
  reason: text('reason').notNull(),
  // the pause's origin, shown on /providers; null in rows written before they were recorded
  /** when the 429 arrived */
  setAt: integer('set_at'),
  /** the server's wait as sent, e.g. `retry-after: Fri, 31 Dec 9999 23:59:59 GMT`; null = none (backoff) */
  serverWait: text('server_wait'),
  /** the wait asked for, ms (may far exceed the pause) */
  askedMs: integer('asked_ms'),
  /** on_rate_limit.max_wait when the pause was set: the pause was capped when asked_ms exceeds it */
  maxWaitMs: integer('max_wait_ms'),
  /** the process sending the one probe after the pause (a cluster-wide claim); null = no probe out */
  probeOwner: text('probe_owner'),
  /** the probe's claim lapses here (its owner died mid-call): another process may probe */
  probeUntil: integer('probe_until'),
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
export const projectSnapshots = sqliteTable(
  'project_snapshots',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    files: text('files', { mode: 'json' }).notNull(),
    hash: text('hash').notNull(),
    /** who made it: a user, a token's name, or cli:<login> */
    author: text('author'),
    /** what made it: "push", "policy <agent>" */
    note: text('note'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('project_snapshots_created_idx').on(t.createdAt)],
);
export type ProjectSnapshotRow = typeof projectSnapshots.$inferSelect;

/** Worker processes (DESIGN: Workers): each writes its row when it starts and every heartbeat; `aqven db status` lists those seen lately. */
export const workers = sqliteTable('workers', {
  id: text('id').primaryKey(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  concurrency: integer('concurrency').notNull(),
  /** runs in progress at the last heartbeat */
  running: integer('running').notNull().default(0),
  startedAt: integer('started_at').notNull(),
  seenAt: integer('seen_at').notNull(),
  stoppedAt: integer('stopped_at'),
});
export type WorkerRow = typeof workers.$inferSelect;

// ── Team access (DESIGN: The dashboard, "Accounts, roles and tokens") ───────────────────────────
// users, sessions, accounts and verifications are better-auth's four tables, in its field names
// (camelCase properties, snake_case columns). Its times are Dates: stored as integer ms like every
// other time here (`mode: 'timestamp_ms'`).

/** integer ms since epoch, read and written as a Date (better-auth's tables) */
const at = (name: string) => integer(name, { mode: 'timestamp_ms' });

/** A person who signs in to the dashboard. `name` is the login (lowercase, unique). */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** better-auth signs in by email: a user's is `<name>@users.aqven.invalid`, never shown */
    email: text('email').notNull(),
    emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
    image: text('image'),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] })
      .notNull()
      .default('viewer'),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
    /** when the user was last seen signing in, out, or with a session that was then revoked; `aqven user list` shows the later of this and their newest session */
    lastSeenAt: at('last_seen_at'),
    /** USD the runs this user starts may spend per UTC day (set by an admin); null: no budget */
    budgetUsdPerDay: real('budget_usd_per_day'),
  },
  (t) => [uniqueIndex('users_name_idx').on(t.name), uniqueIndex('users_email_idx').on(t.email)],
);
export type UserRow = typeof users.$inferSelect;

/** A signed-in browser: the cookie carries the session token (signed); deleting the row signs it out. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    /** sha256 (hex) of the session token: the token itself lives only in the browser's cookie */
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

/** A user's credential: providerId 'credential' holds the scrypt password hash. */
export const accounts = sqliteTable(
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

/** better-auth's one-time values (unused by AQVEN's flows; the library expects the table). */
export const verifications = sqliteTable(
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

/** A service's key to `POST /api/runs`: only the sha256 of the token is kept. */
export const apiTokens = sqliteTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    role: text('role', { enum: ['viewer', 'editor', 'admin'] }).notNull(),
    /** sha256 (hex) of the token: the token itself is shown once and never stored */
    tokenHash: text('token_hash').notNull(),
    /** who created it: a user's name or cli:<login> */
    createdBy: text('created_by'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    revokedAt: integer('revoked_at'),
    /** when it stops being accepted (ms); null: never (only when asked for explicitly) */
    expiresAt: integer('expires_at'),
    /** USD the runs it starts may spend per UTC day; null: no budget */
    budgetUsdPerDay: real('budget_usd_per_day'),
    /** what it may read beyond its role: null, the /api routes as its role allows; `metrics`, GET /metrics and nothing else */
    scope: text('scope', { enum: ['metrics'] }),
  },
  (t) => [uniqueIndex('api_tokens_name_idx').on(t.name), uniqueIndex('api_tokens_hash_idx').on(t.tokenHash)],
);
export type ApiTokenRow = typeof apiTokens.$inferSelect;

/** Fixed-window counters shared by every server process: login attempts, runs started per caller. */
export const requestLimits = sqliteTable('request_limits', {
  /** what is counted, e.g. `login:acct:ana@10.0.0.7`, `login:addr:10.0.0.7`, `runs:token:<id>` */
  key: text('key').primaryKey(),
  windowStart: integer('window_start').notNull(),
  count: integer('count').notNull(),
});
export type RequestLimitRow = typeof requestLimits.$inferSelect;

/**
 * What each caller's runs spent per UTC day, against their budget (DESIGN: The dashboard, "Spend
 * budgets"): one row per caller (`ana`, `token:ci`) and day, added to as attempts record their cost.
 */
export const callerSpend = sqliteTable(
  'caller_spend',
  {
    caller: text('caller').notNull(),
    /** the UTC day, YYYY-MM-DD */
    day: text('day').notNull(),
    usd: real('usd').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.caller, t.day] })],
);
export type CallerSpendRow = typeof callerSpend.$inferSelect;

/**
 * Security events, append-only (DESIGN: The dashboard, "Audit trail"): who did what, when, from
 * where, to what. Never a password, token or key.
 */
export const auditEvents = sqliteTable(
  'audit_events',
  {
    id: text('id').primaryKey(),
    at: integer('at').notNull(),
    /** e.g. sign-in.ok, sign-in.failed, user.added, token.created, policy.saved (DESIGN lists them) */
    kind: text('kind').notNull(),
    /** who: a user's name, `token:<name>`, `cli:<login>`, or null (nobody signed in) */
    actor: text('actor'),
    /** the client's address, when known */
    address: text('address'),
    /** what it was done to: a user, token, agent, batch id… */
    target: text('target'),
    /** a short detail (JSON text), redacted; never a secret */
    detail: text('detail'),
  },
  (t) => [index('audit_events_at_idx').on(t.at), index('audit_events_actor_idx').on(t.actor, t.at), index('audit_events_kind_idx').on(t.kind, t.at)],
);
export type AuditEventRow = typeof auditEvents.$inferSelect;

/** Server settings kept with the data: `auth_secret` signs session cookies (generated once). */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

// ── Team debugging (DESIGN: Storage, "Notes, search and daily statistics") ──────────────────────

/** A team member's note on a run, one of its nodes, or one attempt (markdown, rendered as text-safe HTML). */
export const notes = sqliteTable(
  'notes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
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
export const searchDocs = sqliteTable(
  'search_docs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    nodeRunId: text('node_run_id'),
    attemptId: text('attempt_id'),
    /** input: the run's input; output: a node's output; error: an attempt's or a node's failure text */
    field: text('field', { enum: ['input', 'output', 'error'] }).notNull(),
    body: text('body').notNull(),
    /** when the text was written (ms), for newest-first results */
    at: integer('at').notNull(),
  },
  (t) => [index('search_docs_run_idx').on(t.runId)],
);
export type SearchDocRow = typeof searchDocs.$inferSelect;

/**
 * Finished attempts of `flow` runs summed per agent, UTC day, model, outcome, cause and action,
 * kept up to date by the run store as attempts finish: /agents reads these instead of scanning
 * every attempt. `cause` and `action` are '' where the attempt has none.
 */
export const agentDaily = sqliteTable(
  'agent_daily',
  {
    agent: text('agent').notNull(),
    /** start of the UTC day, ms */
    day: integer('day').notNull(),
    model: text('model').notNull(),
    outcome: text('outcome').notNull(),
    cause: text('cause').notNull(),
    action: text('action').notNull(),
    attempts: integer('attempts').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    /** sum of (finished_at - started_at) over these attempts, ms */
    durationMs: integer('duration_ms').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.agent, t.day, t.model, t.outcome, t.cause, t.action] })],
);
export type AgentDailyRow = typeof agentDaily.$inferSelect;

/** Finished node runs of `flow` runs per agent, UTC day and final status (succeeded, failed, skipped). */
export const nodeDaily = sqliteTable(
  'node_daily',
  {
    agent: text('agent').notNull(),
    day: integer('day').notNull(),
    status: text('status').notNull(),
    nodes: integer('nodes').notNull().default(0),
    /** the newest node start counted here, ms */
    lastStartedAt: integer('last_started_at'),
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
export const failureDaily = sqliteTable(
  'failure_daily',
  {
    sig: text('sig').notNull(),
    day: integer('day').notNull(),
    /** attempt: a failed or dropped attempt; node: a node that failed */
    level: text('level', { enum: ['attempt', 'node'] }).notNull(),
    agent: text('agent').notNull(),
    model: text('model').notNull(),
    code: text('code').notNull(),
    /** the normalised failure text */
    message: text('message').notNull(),
    failures: integer('failures').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    firstAt: integer('first_at').notNull(),
    lastAt: integer('last_at').notNull(),
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
export const modelLimits = sqliteTable(
  'model_limits',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** the `provider:model-id` string, as in agent files */
    model: text('model').notNull(),
    dimension: text('dimension', { enum: ['depth', 'list', 'enum'] }).notNull(),
    /** short hash of the canonical call settings (lib/limits/settings.ts) */
    settingsKey: text('settings_key').notNull(),
    /** the call settings measured under: trials, threshold, max tokens, strict: false */
    settings: text('settings', { mode: 'json' }).notNull(),
    /** YYYY-MM-DD (UTC) */
    measuredOn: text('measured_on').notNull(),
    /** partial: stopped by a budget, Ctrl-C or an error; a later run resumes it */
    status: text('status', { enum: ['running', 'complete', 'partial'] }).notNull(),
    /** the last level whose first-try valid rate reached the threshold */
    lastHeld: integer('last_held'),
    /** the first level below it; null while no level failed */
    firstFailed: integer('first_failed'),
    /** the levels measured, in the order measured (lib/shared/limits-types.ts LimitLevel) */
    levels: text('levels', { mode: 'json' }).notNull(),
    calls: integer('calls').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: real('cost_usd').notNull().default(0),
    /** the limits run (runs.kind = 'limits') of the latest measurement; null once purged */
    runId: text('run_id').references(() => runs.id, { onDelete: 'set null' }),
    startedAt: integer('started_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('model_limits_key_idx').on(t.model, t.dimension, t.settingsKey, t.measuredOn), index('model_limits_model_idx').on(t.model, t.updatedAt)],
);
export type ModelLimitRow = typeof modelLimits.$inferSelect;

// ── Replay batches (DESIGN: The dashboard, "Replay with the current policy") ──────────────────

/**
 * A bulk replay of a failure group and its progress, written by the dashboard process running it
 * (lib/server/replay.ts): at its start, at most every 500 ms while it changes and at each replay's
 * end, every BATCH_HEARTBEAT_MS regardless, and once finished. Any dashboard process reads it; one
 * not finished whose updated_at is older than BATCH_STALE_MS lost its process and reads as stopped.
 */
export const replayBatches = sqliteTable(
  'replay_batches',
  {
    id: text('id').primaryKey(),
    /** what the batch replays: the failure group's signature */
    label: text('label').notNull(),
    /** who started it: a user's name, `token:<name>`; null without accounts */
    startedBy: text('started_by'),
    startedAt: integer('started_at').notNull(),
    /** the owner's last write: progress or heartbeat */
    updatedAt: integer('updated_at').notNull(),
    /** null while it runs */
    finishedAt: integer('finished_at'),
    /** the random id of the process running it (db/run-lease.ts PROCESS_OWNER) */
    owner: text('owner').notNull(),
    total: integer('total').notNull(),
    /** replays that now succeed */
    succeeded: integer('succeeded').notNull().default(0),
    spentUsd: real('spent_usd').notNull().default(0),
    /** the batch's cost cap; null: none */
    capUsd: real('cap_usd'),
    /** why it stopped before its end; null when it went through (or still runs) */
    stopped: text('stopped'),
    /** the whole progress as the batch last saw it (lib/flow/replay.ts BatchProgress) */
    progress: text('progress', { mode: 'json' }).notNull(),
  },
  (t) => [index('replay_batches_started_idx').on(t.startedAt), index('replay_batches_label_idx').on(t.label, t.startedAt)],
);
export type ReplayBatchRow = typeof replayBatches.$inferSelect;

/**
 * `Idempotency-Key`s of `POST /api/runs` (DESIGN: The dashboard, "Calling AQVEN from a service"):
 * one row per caller and key — the primary key decides which of two concurrent requests starts the
 * run. `run_id` is null while the request that claimed the key starts its run; a purged run takes
 * its keys along (cascade), and `aqven runs purge` deletes the keys created before its cutoff.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    /** who sent it: a user's name, `token:<name>`, `open:dashboard` */
    caller: text('caller').notNull(),
    key: text('key').notNull(),
    /** sha256 (hex) of the request's flow and input as canonical JSON */
    fingerprint: text('fingerprint').notNull(),
    runId: text('run_id').references((): AnyRunId => runs.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
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
export const alerts = sqliteTable(
  'alerts',
  {
    key: text('key').primaryKey(),
    rule: text('rule', { enum: ['new_failure', 'failure_share', 'model_paused', 'queue_wait'] }).notNull(),
    /** the agent (new_failure, failure_share), the model (model_paused); null otherwise */
    agent: text('agent'),
    model: text('model'),
    /** new_failure: the failure group's signature (its mark on /failures) */
    sig: text('sig'),
    /** the alert's one line, as sent (stored failure text only, redacted again) */
    summary: text('summary').notNull(),
    firedAt: integer('fired_at').notNull(),
    /** no alert of this key before this time */
    coolUntil: integer('cool_until').notNull(),
    /** how often the key has fired */
    timesFired: integer('times_fired').notNull().default(1),
    /** fired: being delivered (or its process stopped meanwhile); delivered; failed: every try failed */
    status: text('status', { enum: ['fired', 'delivered', 'failed'] }).notNull(),
    tries: integer('tries').notNull().default(0),
    lastError: text('last_error'),
    deliveredAt: integer('delivered_at'),
  },
  (t) => [index('alerts_sig_idx').on(t.sig)],
);
export type AlertRow = typeof alerts.$inferSelect;
