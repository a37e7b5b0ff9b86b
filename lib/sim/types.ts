// Contract of the provider simulator (DESIGN.md §13). Owned by lib/sim; the engine's tests,
// the CLI's --simulate mode and the benchmarks program against these types.

export type Dialect = 'openai' | 'openrouter' | 'anthropic' | 'gemini';

export interface Usage {
  input?: number;
  output?: number;
  /** gemini only: thoughtsTokenCount (billed as output) */
  thoughts?: number;
}

interface StepBase {
  /** latency for this step; overrides the server default */
  latency?: Latency;
  usage?: Usage;
  /** (extension) the finish reason written on the wire, replacing the step's own: any value, e.g.
   * "tool_calls", "RECITATION", "model_context_window_exceeded" or an unknown one */
  finish_reason?: string;
  /** (extension) openrouter only: replaces native_finish_reason */
  native_finish_reason?: string;
}

/** One scripted response. A model's script is played one step per request, then the last repeats. */
export type ScriptStep = StepBase &
  (
    | { kind: 'ok'; text?: string; json?: unknown }
    | { kind: 'invalid'; mode?: 'missing_required' | 'wrong_enum' | 'not_json' }
    | { kind: 'truncated'; parses?: boolean; text?: string }
    | {
        kind: 'refusal';
        text?: string;
        variant?: 'refusal_field' | 'content_filter' | 'stop_reason' | 'safety' | 'prompt_blocked';
      }
    | {
        kind: 'provider_error';
        message?: string;
        variant?: 'finish_error' | 'choice_error' | 'malformed_function_call' | 'other';
        text?: string;
      }
    | {
        kind: 'status';
        status: number;
        headers?: Record<string, string>;
        /** raw body (string) or JSON body; default: the dialect's real error body for that status */
        body?: unknown;
        variant?: 'quota' | 'html' | 'retry_info';
        /** gemini RetryInfo.retryDelay, e.g. "2s" (variant retry_info) */
        retryDelay?: string;
      }
    | { kind: 'drop'; when?: 'before' | 'during_body' | 'mid_stream'; text?: string }
    | { kind: 'stall'; text?: string }
    | { kind: 'stream_error'; text?: string; message?: string }
  );

/** Keyed by the model id as sent on the wire (e.g. "openai/gpt-oss-20b", "gemini-2.5-flash");
 * key "*" applies to every model without its own script. */
export type ScriptMap = Record<string, ScriptStep[]>;

export interface Latency {
  first_token_ms?: number;
  tokens_per_s?: number;
}

/** Probabilities (0..1) per fault kind; the rest of the mass is `ok`. */
export interface ChaosProfile {
  seed?: number;
  rate_limit?: number;
  server_error?: number;
  drop?: number;
  provider_error?: number;
  refusal?: number;
  truncated?: number;
  invalid?: number;
}

export interface SimOptions {
  port?: number; // 0 / undefined = ephemeral
  host?: string; // default 127.0.0.1
  scripts?: ScriptMap;
  chaos?: ChaosProfile;
  latency?: Latency; // default: zero latency
  /** (extension) request log entries kept, oldest dropped first; default 10000 */
  logLimit?: number;
}

/** (extension) the fault a chaos profile picked for a request */
export type ChaosFault = Exclude<keyof ChaosProfile, 'seed'>;

export interface SimRequestLog {
  seq: number;
  method: string;
  path: string;
  dialect: Dialect;
  model: string;
  stream: boolean;
  headers: Record<string, string>; // authorization / x-api-key / x-goog-api-key removed
  body: unknown;
  arrivedAt: number; // Date.now() at arrival
  step: ScriptStep['kind'] | 'chaos_ok';
  /** (extension) the query string without `key=` (e.g. "alt=sse"), "" when none */
  query?: string;
  /** (extension) index of the played step in the model's script; absent for chaos and defaults */
  stepIndex?: number;
  /** (extension) the chaos fault, when a chaos profile chose the step */
  fault?: ChaosFault;
}

export interface SimServer {
  url: string; // e.g. http://127.0.0.1:40123
  port: number;
  /** base_url to configure a provider of the given dialect with */
  baseUrl(dialect: Dialect): string;
  loadScripts(scripts: ScriptMap): void; // replaces scripts and resets positions
  setChaos(chaos: ChaosProfile | undefined): void;
  requests(): SimRequestLog[];
  reset(): void; // clears scripts, positions, chaos and the request log
  close(): Promise<void>;
}
