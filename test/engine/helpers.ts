// Shared set-up of the engine's integration tests: the real simulator on loopback, one provider
// per dialect pointed at it, a node builder, and an event log. No fetch or HTTP is mocked.
import { callNode, type CallNodeDeps } from '@/lib/engine/call-node';
import { createRateGate } from '@/lib/engine/rate-gate';
import type { EngineEvent, NodeCall, NodePolicy, NodeResult, ResolvedProvider } from '@/lib/engine/types';
import { createVirtualClock, type VirtualClock } from '@/lib/engine/virtual-clock';
import { builtinAdapters } from '@/lib/providers';
import { startSimulator } from '@/lib/sim';
import type { Dialect, ScriptStep, SimRequestLog, SimServer } from '@/lib/sim/types';

export interface DialectCase {
  dialect: Dialect;
  /** provider name in the project */
  provider: string;
  modelId: string;
  /** the model string */
  model: string;
}

const CASE = (dialect: Dialect, provider: string, modelId: string): DialectCase => ({ dialect, provider, modelId, model: `${provider}:${modelId}` });

export const OPENAI = CASE('openai', 'openai', 'gpt-4.1-mini');
export const OPENROUTER = CASE('openrouter', 'openrouter', 'openai/gpt-oss-20b');
export const ANTHROPIC = CASE('anthropic', 'anthropic', 'claude-sonnet-4-5');
export const GEMINI = CASE('gemini', 'google', 'gemini-2.5-flash');
/** every wire protocol, OpenRouter as the openai protocol's second flavour */
export const DIALECTS = [OPENAI, OPENROUTER, ANTHROPIC, GEMINI];
/** a second model per dialect, for fallback chains and "another model" */
export const other = (c: DialectCase): DialectCase => CASE(c.dialect, c.provider, `${c.modelId}-other`);

/** Catalogue prices for the providers that send no cost. */
export const PRICE = { inputPerMtok: 1, outputPerMtok: 2 };

export type ProviderOverrides = Partial<Pick<ResolvedProvider, 'maxConcurrency'>> & {
  transport?: Partial<ResolvedProvider['transport']>;
  onRateLimit?: Partial<ResolvedProvider['onRateLimit']>;
};

export function simProviders(sim: SimServer, over: ProviderOverrides = {}): Record<string, ResolvedProvider> {
  const make = (c: DialectCase): ResolvedProvider => ({
    name: c.provider,
    api: c.dialect === 'openrouter' ? 'openai' : c.dialect === 'gemini' ? 'gemini' : c.dialect,
    baseUrl: sim.baseUrl(c.dialect),
    apiKeyEnv: `${c.provider.toUpperCase()}_API_KEY`,
    structuredOutputs: true,
    transport: { maxAttempts: 3, budgetMs: 60_000, timeoutMs: 120_000, idleTimeoutMs: 120_000, tryDeadlineMs: 1_800_000, maxResponseBytes: 8 * 1024 * 1024, ...over.transport },
    onRateLimit: { maxAttempts: 5, defaultWaitMs: 1000, maxWaitMs: 60_000, ...over.onRateLimit },
    maxConcurrency: over.maxConcurrency ?? 16,
    models: Object.fromEntries(
      DIALECTS.filter((d) => d.provider === c.provider).flatMap((d) => [
        [d.modelId, PRICE],
        [other(d).modelId, PRICE],
      ]),
    ),
  });
  return Object.fromEntries(DIALECTS.map((c) => [c.provider, make(c)]));
}

export const SCHEMA = {
  type: 'object',
  properties: { queue: { enum: ['billing', 'tech', 'sales'] }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
  required: ['queue', 'confidence'],
};

export function node(chain: string[], over: Omit<Partial<NodeCall>, 'policy'> & { policy?: Partial<NodePolicy> } = {}): NodeCall {
  const { policy, ...rest } = over;
  return {
    nodeId: 'classify',
    agent: 'classifier',
    agentFile: 'agents/classifier.yaml',
    prompt: 'Sort this ticket into a queue: my invoice is wrong',
    ...rest,
    policy: { chain, retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict: false, ...policy },
  };
}

export interface Harness {
  sim: SimServer;
  clock: VirtualClock;
  events: EngineEvent[];
  /** runs a node against the simulator with a fresh gate and the virtual clock */
  run(call: NodeCall, deps?: Partial<CallNodeDeps> & { providerOverrides?: ProviderOverrides }): Promise<NodeResult>;
  script(steps: Record<string, ScriptStep[]>): void;
  /** the simulator's log for one model id */
  requests(modelId?: string): SimRequestLog[];
}

/** One simulator per test file; call `fresh()` in beforeEach for a clean log, clock and event list. */
export async function harness(): Promise<Harness & { fresh(): void; close(): Promise<void> }> {
  const sim = await startSimulator({});
  const h = {
    sim,
    clock: createVirtualClock(),
    events: [] as EngineEvent[],
    fresh() {
      sim.reset();
      h.clock = createVirtualClock();
      h.events = [];
    },
    close: () => sim.close(),
    script: (steps: Record<string, ScriptStep[]>) => sim.loadScripts(steps),
    requests: (modelId?: string) => sim.requests().filter((r) => modelId === undefined || r.model === modelId),
    run: (call: NodeCall, deps: Partial<CallNodeDeps> & { providerOverrides?: ProviderOverrides } = {}) => {
      const { providerOverrides, ...rest } = deps;
      return callNode(call, {
        providers: simProviders(sim, providerOverrides),
        adapters: builtinAdapters,
        clock: h.clock,
        gate: createRateGate(),
        env: {},
        onEvent: (e) => void h.events.push(e),
        ...rest,
      });
    },
  };
  return h;
}

/** The text of the last user message of a logged request, whatever the dialect. */
export function lastUserText(r: SimRequestLog): string {
  const body = r.body as { messages?: { role: string; content: unknown }[]; contents?: { role: string; parts: { text: string }[] }[] };
  if (body.contents) {
    const u = body.contents.filter((c) => c.role === 'user').at(-1);
    return u ? u.parts.map((p) => p.text).join('') : '';
  }
  const u = (body.messages ?? []).filter((m) => m.role === 'user').at(-1);
  return typeof u?.content === 'string' ? u.content : '';
}

/** Number of turns (messages / contents, system excluded) in a logged request. */
export function turns(r: SimRequestLog): number {
  const body = r.body as { messages?: { role: string }[]; contents?: unknown[] };
  return body.contents ? body.contents.length : (body.messages ?? []).filter((m) => m.role !== 'system').length;
}

/** Polls until `cond` holds (real time; for the few tests that drive a manual clock). */
export async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}
