// Seeded chaos: each request draws its fault from a ChaosProfile with a small PRNG, so the same
// seed and the same request order give the same sequence of steps (DESIGN: The provider simulator).
import { CHAOS_FAULTS } from './script-schema';
import type { ChaosFault, ChaosProfile, Dialect, ScriptStep } from './types';

export { CHAOS_FAULTS };

/** mulberry32: a tiny 32-bit PRNG, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ChaosPick {
  fault: ChaosFault | null; // null = ok
  /** second draw: picks the flavour of the fault (500 vs 503, drop before vs mid-way, …) */
  sub: number;
}

export class Chaos {
  private readonly rand: () => number;

  constructor(readonly profile: ChaosProfile) {
    this.rand = mulberry32(profile.seed ?? 1);
  }

  /** Exactly two draws per request, whatever the outcome, so later picks never shift. */
  pick(): ChaosPick {
    const r = this.rand();
    const sub = this.rand();
    let acc = 0;
    for (const fault of CHAOS_FAULTS) {
      acc += this.profile[fault] ?? 0;
      if (r < acc) return { fault, sub };
    }
    return { fault: null, sub };
  }
}

/** The script step a chaos fault plays for a request of this dialect. */
export function chaosStep(fault: ChaosFault, sub: number, dialect: Dialect, stream: boolean): ScriptStep {
  switch (fault) {
    case 'rate_limit':
      // Gemini sends no retry-after header; its wait travels as RetryInfo in the body.
      return dialect === 'gemini' ? { kind: 'status', status: 429, variant: 'retry_info', retryDelay: '1s' } : { kind: 'status', status: 429, headers: { 'retry-after': '1' } };
    case 'server_error':
      if (sub < 0.5) return { kind: 'status', status: dialect === 'anthropic' ? 529 : 503 };
      return { kind: 'status', status: 500 };
    case 'drop':
      if (sub < 0.5) return { kind: 'drop', when: 'before' };
      return { kind: 'drop', when: stream ? 'mid_stream' : 'during_body' };
    case 'provider_error':
      return { kind: 'provider_error' };
    case 'refusal':
      return { kind: 'refusal' };
    case 'truncated':
      return { kind: 'truncated', parses: sub < 0.25 };
    case 'invalid':
      return { kind: 'invalid', mode: sub < 1 / 3 ? 'missing_required' : sub < 2 / 3 ? 'wrong_enum' : 'not_json' };
  }
}
