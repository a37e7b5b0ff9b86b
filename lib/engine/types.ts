// Contract of the engine (DESIGN: One model call, in order, through Streaming, and The run record).
// The flow runner, the recorder, the CLI and the dashboard all consume these types; the engine core
// owns them.

export type Outcome = 'ok' | 'error' | 'refusal' | 'truncated';
export type Cause = 'provider_error' | 'refusal' | 'truncated' | 'invalid_output';
export type Action = 'retry' | 'fallback' | 'repair' | 'none';
export type OutcomePolicy = 'fail' | 'retry' | 'fallback';
export type NodeErrorCode = Cause;
export type AttemptErrorKind = Cause | 'transport' | 'client_error';
export type TryError = 'timeout' | 'connection' | 'rate_limited' | 'server_error' | 'client_error' | null;
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

/** A provider with every default applied and durations in milliseconds. */
export interface ResolvedProvider {
  name: string;
  api: WireApi;
  baseUrl: string;
  /** name of the env variable holding the key; the key itself is read at call time, never stored */
  apiKeyEnv?: string;
  structuredOutputs: boolean;
  transport: { maxAttempts: number; budgetMs: number; timeoutMs: number };
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
  cause: Cause | null;
  action: Action;
  request: Message[];
  responseText: string | null; // ok attempts only
  error: { kind: AttemptErrorKind; message: string; detail: string | null } | null; // detail redacted
  validationErrors: ValidationIssue[];
  discarded: boolean;
  streamedText: string | null; // redacted when discarded
  usage: UsageTotals;
  startedAt: number;
  finishedAt: number;
  tries: TryRecord[];
}

export interface NodeResult {
  status: 'succeeded' | 'failed';
  output: unknown; // validated JSON value, or text
  error: { code: NodeErrorCode; message: string; hint: string } | null;
  usage: UsageTotals;
  attempts: AttemptRecord[];
  budget: { retries: number; models: { model: string; answers: number; limit: number }[] };
}

/** Facts the engine emits; every handler is awaited before the engine goes on. */
export type EngineEvent =
  | { type: 'attempt_start'; nodeId: string; seq: number; model: string; chainIndex: number; answerNo: number; request: Message[]; startedAt: number }
  /** tryNo: a transport re-try mid-stream starts the attempt's text afresh (the try_end before it carries the discarded text) */
  | { type: 'delta'; nodeId: string; seq: number; tryNo: number; text: string }
  | { type: 'try_end'; nodeId: string; seq: number; try: TryRecord }
  | { type: 'attempt_end'; nodeId: string; attempt: AttemptRecord }
  | { type: 'rate_limit_pause'; model: string; pausedUntil: number; reason: string };

export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

/** A store shared across processes (the rate_limit_pauses table); optional. */
export interface SharedPauses {
  get(model: string): number | null; // paused_until in ms, or null
  set(model: string, pausedUntil: number, reason: string): void;
}
