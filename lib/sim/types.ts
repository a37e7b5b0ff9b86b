// Contract of the provider simulator (DESIGN: The provider simulator). Owned by lib/sim; the
// engine's tests, the CLI's --simulate mode and the benchmarks program against these types.
import type { CHAOS_FAULTS, ChaosProfile, Latency, ScriptMap, ScriptStep, SimLimits } from './script-schema';

export type Dialect = 'openai' | 'openrouter' | 'anthropic' | 'gemini';

// Scripts, chaos and latency are derived from their zod schema, the one home of that format.
export type { ChaosProfile, Latency, ScriptMap, ScriptStep, SimLimits, SimModelLimits, Usage } from './script-schema';

export interface SimOptions {
  port?: number; // 0 / undefined = ephemeral
  host?: string; // default 127.0.0.1
  scripts?: ScriptMap;
  chaos?: ChaosProfile;
  latency?: Latency; // default: zero latency
  /** structural limits per model id (lib/sim/limits.ts); draws seeded by `limitsSeed` (default 1) */
  limits?: SimLimits;
  limitsSeed?: number;
  /** (extension) request log entries kept, oldest dropped first; default 10000 */
  logLimit?: number;
  /** (extension) OpenRouter's `GET /generation?id=` (lib/sim/generations.ts) */
  generations?: SimGenerationOptions;
}

/** How the OpenRouter flavour serves the stats of the answers it rendered. */
export interface SimGenerationOptions {
  /** ms after an answer before its stats are ready (404 until then, as OpenRouter's take a few seconds); default 0 */
  readyAfterMs?: number;
  /** asks of an answer's stats answered 404 before they are ready, whatever the clock (a lookup that came too early, told without timing); default 0 */
  readyAfterLookups?: number;
  /** the one API key the endpoint accepts (`Authorization: Bearer …`); any other gets 401. Default: any key, or none */
  key?: string;
  /** answers remembered, the oldest forgotten first; default 10000 */
  keep?: number;
}

/** (extension) the fault a chaos profile picked for a request */
export type ChaosFault = (typeof CHAOS_FAULTS)[number];

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
