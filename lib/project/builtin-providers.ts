// Providers a project may use without a providers/ file (DESIGN: Project files), and the defaults
// every provider gets: transport and on_rate_limit as documented in the provider file format.
// PROVIDER_DEFAULTS is their one home: providers/NAME.yaml's schema (schema.ts) defaults to it.
import { TRANSPORT_BACKOFF_DEFAULT } from '../engine/backoff';
import type { ResolvedProvider, WireApi } from '../engine/types';

export const PROVIDER_DEFAULTS = {
  transport: {
    maxAttempts: 3,
    budgetMs: 60_000,
    timeoutMs: 120_000,
    /** transport.idle_timeout: a stream with no content (keep-alives only) for this long is cut */
    idleTimeoutMs: 120_000,
    /** transport.try_deadline: one try, whatever arrives; generous, so a long stream is not cut at the budget */
    tryDeadlineMs: 30 * 60_000,
    /** transport.max_response_bytes: bytes read per response after decompression */
    maxResponseBytes: 8 * 1024 * 1024,
    /** transport.backoff: the wait before re-trying a 5xx, a dropped connection or a timeout when the server names none */
    backoff: TRANSPORT_BACKOFF_DEFAULT,
  },
  onRateLimit: { maxAttempts: 5, defaultWaitMs: 1_000, maxWaitMs: 60_000 },
  maxConcurrency: 16,
  /** a custom provider is not assumed to constrain generation to a schema */
  structuredOutputs: false,
} as const;

/** Bounds of the provider settings that are sizes (the duration bounds live with the duration schema). */
export const PROVIDER_LIMITS = {
  maxResponseBytes: { min: 1024, max: 256 * 1024 * 1024 },
} as const;

interface BuiltIn {
  api: WireApi;
  baseUrl: string;
  apiKeyEnv: string;
  structuredOutputs: boolean;
}

const BUILT_INS: Record<string, BuiltIn> = {
  openrouter: { api: 'openai', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY', structuredOutputs: true },
  openai: { api: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', structuredOutputs: true },
  anthropic: { api: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY', structuredOutputs: true },
  google: { api: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKeyEnv: 'GEMINI_API_KEY', structuredOutputs: true },
};

export const BUILT_IN_PROVIDER_NAMES = Object.keys(BUILT_INS);

const BUILT_IN_HOSTS = new Set(Object.values(BUILT_INS).map((b) => new URL(b.baseUrl).host));

/** The URL is on a built-in provider's own host (openrouter.ai, api.openai.com, …): a real provider, never a simulator. */
export function onBuiltInHost(url: string): boolean {
  try {
    return BUILT_IN_HOSTS.has(new URL(url).host);
  } catch {
    return false;
  }
}

/** Hosts whose openai-protocol replies state what was charged: OpenRouter `usage.cost`, xAI `usage.cost_in_usd_ticks` (WIRE.md). */
const COST_STATING_HOSTS = new Set(['openrouter.ai', 'api.x.ai']);

/** The provider states each reply's cost itself: its catalogue price is only a fallback (DESIGN: "The provider's own cost first"). */
export function statesItsCost(provider: Pick<ResolvedProvider, 'api' | 'baseUrl'>): boolean {
  if (provider.api !== 'openai') return false;
  try {
    return COST_STATING_HOSTS.has(new URL(provider.baseUrl).hostname);
  } catch {
    return false;
  }
}

export function builtInProviderBase(name: string): BuiltIn | undefined {
  return Object.hasOwn(BUILT_INS, name) ? BUILT_INS[name] : undefined;
}

/** A built-in provider with every default applied. */
export function builtInProvider(name: string): ResolvedProvider | undefined {
  const b = builtInProviderBase(name);
  if (!b) return undefined;
  return {
    name,
    api: b.api,
    baseUrl: b.baseUrl,
    apiKeyEnv: b.apiKeyEnv,
    structuredOutputs: b.structuredOutputs,
    transport: { ...PROVIDER_DEFAULTS.transport, backoff: { ...PROVIDER_DEFAULTS.transport.backoff } },
    onRateLimit: { ...PROVIDER_DEFAULTS.onRateLimit },
    maxConcurrency: PROVIDER_DEFAULTS.maxConcurrency,
    models: {},
  };
}
