// Contract of the engine (DESIGN: One model call, in order, through Streaming, and The run record).
// The flow runner, the recorder, the CLI and the dashboard all consume these types; the engine core
// owns them.

import type { NODE_CAUSES } from '@/lib/shared/run-codes';

export type Outcome = 'ok' | 'error' | 'refusal' | 'truncated';
/** provider_error, refusal, truncated, invalid_output, quota — `quota`: the provider said the account's quota or spend limit is spent (outcome error): waiting will not clear it. The list and each one's page: lib/shared/run-codes.ts */
export type Cause = (typeof NODE_CAUSES)[number];
export type Action = 'retry' | 'fallback' | 'repair' | 'none';
export type OutcomePolicy = 'fail' | 'retry' | 'fallback';
export type NodeErrorCode = Cause;
/** `not_sent`: the rate-limit gate refused the attempt's first try — nothing was sent, so it is no answer */
export type AttemptErrorKind = Cause | 'transport' | 'client_error' | 'not_sent';
/** `cut_off`: sent, and the run was stopped (or its process died) before the answer was read — the provider may have answered (DESIGN: Storage, "Write-ahead") */
export type TryError = 'timeout' | 'connection' | 'rate_limited' | 'server_error' | 'client_error' | 'cut_off' | null;
export type WireApi = 'openai' | 'anthropic' | 'gemini';

export interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface ModelPrice {
  inputPerMtok?: number;
  outputPerMtok?: number;
  structuredOutputs?: boolean;
}

/** `transport.backoff` resolved (DESIGN: Transport retry and rate limits): durations in ms. */
export interface TransportBackoff {
  baseMs: number;
  /** each next re-try waits this many times longer (≥ 1) */
  factor: number;
  capMs: number;
  /** the largest fraction of a wait taken off at random, 0..1 (1: "full jitter", anywhere from 0 to the wait) */
  jitter: number;
}

/** A provider with every default applied and durations in milliseconds. */
export interface ResolvedProvider {
  name: string;
  api: WireApi;
  baseUrl: string;
  /** name of the env variable holding the key; the key itself is read at call time, never stored */
  apiKeyEnv?: string;
  structuredOutputs: boolean;
  transport: {
    maxAttempts: number;
    budgetMs: number;
    /** until the response headers; then the longest silence between chunks (streams) or the body read */
    timeoutMs: number;
    /** streams: the longest time without content (keep-alive comments and pings do not count) */
    idleTimeoutMs: number;
    /** the longest one try may take, whatever arrives */
    tryDeadlineMs: number;
    /** bytes read per response after decompression; past it the try fails and is not retried */
    maxResponseBytes: number;
    /** the wait before re-trying a failure that is not a rate limit, when the server names none; absent: TRANSPORT_BACKOFF_DEFAULT (backoff.ts) */
    backoff?: TransportBackoff;
  };
  onRateLimit: { maxAttempts: number; defaultWaitMs: number; maxWaitMs: number };
  maxConcurrency: number;
  models: Record<string, ModelPrice>;
}

export interface NodePolicy {
  /** [model, ...fallback_models], model strings "provider:model-id" */
  chain: string[];
  retries: number;
  onError: OutcomePolicy;
  onRefusal: OutcomePolicy;
  onTruncated: OutcomePolicy;
  strict: boolean;
}

/** Everything needed to run one node to completion. */
export interface NodeCall {
  nodeId: string;
  agent: string;
  /** the agent file, relative to the project, e.g. "agents/classifier.yaml" (used in hints) */
  agentFile: string;
  policy: NodePolicy;
  system?: string;
  settings?: { temperature?: number; max_tokens?: number; [k: string]: unknown };
  prompt: string;
  /** JSON Schema of the node's output; absent = text output */
  outputSchema?: Record<string, unknown>;
  stream?: boolean;
  /** a node restarted after its process died: what it had done before (DESIGN: Storage, "Leases") */
  prior?: PriorAnswers;
}

/**
 * An attempt a node stored before its process died, as far as the policy reads it again. `cutOff`:
 * its try was sent and never read (write-ahead; stored with no outcome) — an answer of its model
 * all the same, read as an error once its model has no answers left.
 */
export type PriorAttempt = Pick<AttemptRecord, 'model' | 'outcome' | 'error' | 'responseText' | 'tries'> & { cutOff?: boolean };

/**
 * What a restarted node had done before (DESIGN: Storage, "Leases"): the answers its models gave
 * count against their `retries + 1`, and the node goes on from the decision its last answer calls for.
 */
export interface PriorAnswers {
  /** the node's stored attempts that got an outcome, in seq order (an attempt cut off has none: it is no answer) */
  attempts: readonly PriorAttempt[];
  /** the highest seq the node stored, cut-off attempts included: new attempts are numbered after it */
  lastSeq: number;
}

export interface TryRecord {
  tryNo: number;
  status: number | null;
  error: TryError;
  retryAfterMs: number | null;
  waitedMs: number;
  startedAt: number;
  finishedAt: number;
  /** text this try streamed before its connection broke (DESIGN: Streaming: discarded), redacted; absent otherwise */
  discardedText?: string | null;
  /** the provider's generation id of a 2xx reply not read to its end (OpenRouter's `x-generation-id`): its usage is looked up later; absent otherwise */
  generationId?: string | null;
  /** as stored (the engine never sets it): the later lookup of that reply's usage (lib/flow/usage-lookup.ts) */
  usageLookup?: 'pending' | 'found' | 'gave_up' | null;
}

export interface ValidationIssue {
  pointer: string; // JSON pointer, "" for the root
  message: string;
}

export interface AttemptRecord {
  seq: number; // 1.. within the node
  model: string;
  chainIndex: number;
  answerNo: number; // 1.. answers of this model for this node
  outcome: Outcome;
  finishReason: string | null;
  /** the upstream provider's own value when a router normalises finishReason (OpenRouter native_finish_reason) */
  nativeFinishReason?: string | null;
  /** the model the provider says answered (its reply's `model`, Gemini's `modelVersion`); absent when it named none. Not stored: told to observers (traces) */
  responseModel?: string;
  /** an ok answer whose finish reason decided nothing (DESIGN: Outcome classification): "unrecognised finish reason `eos`", "no finish reason" */
  finishNote?: string | null;
  cause: Cause | null;
  action: Action;
  request: Message[];
  responseText: string | null; // ok attempts only
  error: { kind: AttemptErrorKind; message: string; detail: string | null } | null; // failure text: redacted, capped
  validationErrors: ValidationIssue[]; // pointers and messages redacted, capped
  discarded: boolean;
  streamedText: string | null; // redacted and capped when discarded
  usage: UsageTotals;
  /** set (true) when a reply was not read to its end (size limit, timeout or break after the
   * headers): the provider may have billed tokens that `usage` does not count — never read as zero */
  usageUnknown?: boolean;
  /** reasoning tokens the provider stated apart (part of `usage.outputTokens`); absent: none stated */
  reasoningTokens?: number;
  /** whose price `usage.costUsd` is (DESIGN: "The provider's own cost first"): the charge the provider
   * stated, the catalogue's, `none` — tokens neither prices (an unpriced model: the cost is unknown, not $0);
   * null: nothing to price (or recorded before it was kept) */
  costSource?: CostSource;
  startedAt: number;
  finishedAt: number;
  tries: TryRecord[];
}

export type CostSource = 'provider' | 'catalogue' | 'none' | null;

/**
 * A refusal to send the next attempt, from outside the engine (CallNodeDeps.admit): the node ends
 * failed with it and nothing is sent. E_BUDGET: the caller's daily spend budget is spent (DESIGN:
 * The dashboard, "Spend budgets").
 */
export interface AttemptRefusal {
  code: 'E_BUDGET';
  message: string;
  hint: string;
}

export interface NodeResult {
  status: 'succeeded' | 'failed';
  output: unknown; // validated JSON value, or text
  error: { code: NodeErrorCode | AttemptRefusal['code']; message: string; hint: string } | null;
  /** of `attempts` */
  usage: UsageTotals;
  /** the attempts of this call (a restarted node's earlier ones are its caller's) */
  attempts: AttemptRecord[];
  /** answers per model, a restarted node's earlier answers (NodeCall.prior) included */
  budget: { retries: number; models: { model: string; answers: number; limit: number }[] };
}

/** Facts the engine emits; every handler is awaited before the engine goes on. */
export type EngineEvent =
  | { type: 'attempt_start'; nodeId: string; seq: number; model: string; chainIndex: number; answerNo: number; request: Message[]; startedAt: number }
  /**
   * tryNo: a transport re-try mid-stream starts the attempt's text afresh (the try_end before it carries the discarded text).
   * `text` is raw, for a live view only, never stored. `stored` is what may be written (DESIGN: Streaming): the try's text
   * redacted (five detectors, API key) as far as no later chunk can change it, often '' — it trails `text` by a held-back
   * tail, which is never stored from deltas: the attempt_end record (or the try's discardedText) carries the whole text.
   */
  | { type: 'delta'; nodeId: string; seq: number; tryNo: number; text: string; stored: string }
  /**
   * Write-ahead (DESIGN: Storage, "Write-ahead"): try `tryNo` of the attempt is about to be sent (its gate passed).
   * The engine awaits the handler before the request leaves; when it rejects (the record could not be written),
   * nothing is sent and the attempt ends with that error.
   */
  | { type: 'try_start'; nodeId: string; seq: number; tryNo: number; at: number }
  /** the try's reply named its generation (OpenRouter's x-generation-id) as its headers came in; not awaited */
  | { type: 'try_generation'; nodeId: string; seq: number; tryNo: number; generationId: string }
  | { type: 'try_end'; nodeId: string; seq: number; try: TryRecord }
  | { type: 'attempt_end'; nodeId: string; attempt: AttemptRecord }
  /**
   * The caller's signal cut the attempt off (DESIGN: Storage, "Stopping a run"); no attempt_end follows, the engine
   * throws the signal's reason next. `usage`: what the provider had reported, priced like any attempt's — the tries
   * over, and the cut-off try's as far as its stream had reported it. `usageUnknown`: the cut-off try had reported
   * none yet (or an earlier try was not read to its end), so tokens may have been billed that `usage` lacks.
   */
  | { type: 'attempt_interrupted'; nodeId: string; seq: number; usage: UsageTotals; usageUnknown: boolean }
  | { type: 'rate_limit_pause'; model: string; pausedUntil: number; reason: string; origin: PauseOrigin };

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/**
 * Where a rate-limit pause came from (DESIGN: Transport retry and rate limits), stored with it and
 * shown on /providers: the 429's time, the server's wait as sent, and the cap that bounded it.
 */
export interface PauseOrigin {
  /** when the 429 arrived */
  setAt: number;
  /** the server's wait exactly as sent, e.g. `retry-after: Fri, 31 Dec 9999 23:59:59 GMT`; null = none sent (backoff) */
  serverWait: string | null;
  /** the wait asked for (the server's, or the backoff drawn), ms; it may be far longer than the pause */
  askedMs: number;
  /** on_rate_limit.max_wait: no pause lasts longer; the pause was capped when askedMs exceeds it */
  maxWaitMs: number;
}

/** A store shared across processes (the rate_limit_pauses table); optional. */
export interface SharedPauses {
  get(model: string): number | null; // paused_until in ms, or null
  set(model: string, pausedUntil: number, reason: string, origin?: PauseOrigin): void;
  /**
   * The cluster's gate (PostgreSQL; DESIGN: Transport retry and rate limits, "One gate across the
   * cluster"): the stored pause is the truth, the store says when it changes, and the one probe
   * after a pause is claimed cluster-wide. Absent (SQLite): the probe is per process.
   */
  cluster?: ClusterPauses;
}

/** What a cluster-wide claim of the probe after a pause found. */
export type ProbeClaim =
  /** this process sends the probe, and reports how it ended (probeDone) */
  | { kind: 'won' }
  /** another process's probe is out, or a new pause began: wait for a change, at most until `retryAt` (its claim lapses) */
  | { kind: 'taken'; retryAt: number }
  /** no pause is stored for the model (a probe came back, or an editor cleared it): the calls go, none as a probe */
  | { kind: 'none' };

/**
 * How a claimed probe ended: `ok` came back without a 429 (the pause is over for everyone),
 * `rate_limited` got one (its new pause is set), `not_sent` never went out (the claim is handed back).
 */
export type ProbeOutcome = 'ok' | 'rate_limited' | 'not_sent';

/** The hooks of a shared store that gates one model across processes (SharedPauses.cluster). */
export interface ClusterPauses {
  /** resolves once the stored pauses have been read (a process starting mid-pause waits it out); never rejects */
  ready(): Promise<void>;
  /** claims the probe after the model's pause, at `now` (the gate's clock); never rejects */
  claimProbe(model: string, now: number): Promise<ProbeClaim>;
  probeDone(model: string, outcome: ProbeOutcome): void;
  /** calls `onChange` when the model's stored pause or probe claim changes; returns the unsubscribe */
  watch(model: string, onChange: () => void): () => void;
}
