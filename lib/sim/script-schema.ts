// The one schema of the simulator's scripts, chaos profiles and latency (DESIGN: The provider
// simulator). `aqven sim --scenario`, the control API and aqven.yaml's `simulate:` block all parse
// with it, and the TypeScript types are derived from it, so the three cannot drift apart.
// Imports only zod: lib/project may import this module and nothing else of lib/sim.
import { z } from 'zod';

/** Order in which chaos lays out its probability mass; part of the reproducibility contract. */
export const CHAOS_FAULTS = ['rate_limit', 'server_error', 'drop', 'provider_error', 'refusal', 'truncated', 'invalid'] as const;

export const STEP_KINDS = ['ok', 'invalid', 'truncated', 'refusal', 'provider_error', 'status', 'drop', 'stall', 'stream_error', 'redirect', 'keepalive'] as const;

/** Bounds of the body options: `pad_bytes` up to 16 GiB (a gzip bomb is ~1000:1), keep-alives 1 ms..60 s apart. */
export const PAD_BYTES_MAX = 16 * 1024 ** 3;
export const KEEPALIVE_EVERY_MS_MAX = 60_000;

const count = z.number().int().nonnegative();
const probability = z.number().min(0).max(1);

export const usageSchema = z.strictObject({
  input: count.optional(),
  output: count.optional(),
  /** reasoning tokens: gemini thoughtsTokenCount, openai/openrouter completion_tokens_details.reasoning_tokens (billed as output) */
  thoughts: count.optional(),
  /** openai/openrouter: false sends no usage at all — a compatible server that ignores stream_options.include_usage */
  reported: z.boolean().optional(),
  /** openai: "xai" reports usage as xAI does — completion_tokens without the reasoning tokens (total_tokens
   * counts them), and the charged cost as usage.cost_in_usd_ticks (1 USD = 1e10 ticks) */
  billing: z.enum(['openai', 'xai']).optional(),
});

/** Bounds of the simulated latency: every wait is a Node timer (which fires at once past ~24.8 days). */
export const LATENCY_LIMITS = { firstTokenMs: 600_000, minTokensPerS: 1 } as const;

export const latencySchema = z.strictObject({
  /** at most 10 minutes */
  first_token_ms: z.number().nonnegative().max(LATENCY_LIMITS.firstTokenMs).optional(),
  /** 0 or absent: no pacing; else at least 1 (at most a second between stream events) */
  tokens_per_s: z
    .number()
    .nonnegative()
    .refine((v) => v === 0 || v >= LATENCY_LIMITS.minTokensPerS, { message: `tokens_per_s must be 0 (no pacing) or at least ${LATENCY_LIMITS.minTokensPerS}` })
    .optional(),
});

const stepBase = {
  /** latency for this step; replaces the server default */
  latency: latencySchema.optional(),
  usage: usageSchema.optional(),
  /** (extension) the finish reason written on the wire, replacing the step's own: any value, e.g.
   * "tool_calls", "RECITATION", "model_context_window_exceeded" or an unknown one ("eos"); null
   * sends none at all (openai `finish_reason: null`, anthropic `stop_reason: null`, gemini no
   * `finishReason`) — in a stream, a stream that ends without any */
  finish_reason: z.string().nullable().optional(),
  /** (extension) openrouter only: replaces native_finish_reason */
  native_finish_reason: z.string().optional(),
  /** send the response gzip-encoded (`content-encoding: gzip`), as a CDN may */
  gzip: z.boolean().optional(),
  /** this many bytes of whitespace before the body (streams: one SSE comment line): a large body;
   * with `gzip`, a gzip bomb — generated as it is sent, never held in memory */
  pad_bytes: z.number().int().nonnegative().max(PAD_BYTES_MAX).optional(),
};

/** One scripted response. A model's script is played one step per request, then the last repeats. */
export const scriptStepSchema = z.discriminatedUnion('kind', [
  z.strictObject({ ...stepBase, kind: z.literal('ok'), text: z.string().optional(), json: z.unknown().optional() }),
  z.strictObject({ ...stepBase, kind: z.literal('invalid'), mode: z.enum(['missing_required', 'wrong_enum', 'not_json']).optional() }),
  z.strictObject({ ...stepBase, kind: z.literal('truncated'), parses: z.boolean().optional(), text: z.string().optional() }),
  z.strictObject({
    ...stepBase,
    kind: z.literal('refusal'),
    text: z.string().optional(),
    variant: z.enum(['refusal_field', 'content_filter', 'stop_reason', 'safety', 'prompt_blocked']).optional(),
  }),
  z.strictObject({
    ...stepBase,
    kind: z.literal('provider_error'),
    message: z.string().optional(),
    variant: z.enum(['finish_error', 'choice_error', 'malformed_function_call', 'other']).optional(),
    text: z.string().optional(),
  }),
  z.strictObject({
    ...stepBase,
    kind: z.literal('status'),
    status: z.number().int().min(100).max(599),
    headers: z.record(z.string(), z.string()).optional(),
    /** raw body (string) or JSON body; default: the dialect's real error body for that status */
    body: z.unknown().optional(),
    variant: z.enum(['quota', 'html', 'retry_info']).optional(),
    /** gemini RetryInfo.retryDelay, e.g. "2s" (variant retry_info) */
    retryDelay: z.string().optional(),
  }),
  z.strictObject({ ...stepBase, kind: z.literal('drop'), when: z.enum(['before', 'during_body', 'mid_stream']).optional(), text: z.string().optional() }),
  /** headers (streams: the first event), then silence; `early_usage` (streams): the usage is reported before the
   * silence — openai/openrouter: the opening chunk, a usage chunk, then `text`'s deltas; anthropic (message_start)
   * and gemini (every chunk) report it in their first event anyway */
  z.strictObject({ ...stepBase, kind: z.literal('stall'), text: z.string().optional(), early_usage: z.boolean().optional() }),
  /** some deltas, then the dialect's mid-stream error: `overload` (default), `rate_limit`, or `malformed_call` (a broken answer) */
  z.strictObject({
    ...stepBase,
    kind: z.literal('stream_error'),
    text: z.string().optional(),
    message: z.string().optional(),
    variant: z.enum(['overload', 'rate_limit', 'malformed_call']).optional(),
  }),
  /** a 3xx with a Location header (absolute, or relative to the request) */
  z.strictObject({ ...stepBase, kind: z.literal('redirect'), status: z.number().int().min(300).max(399).optional(), location: z.string().min(1) }),
  /** headers (streams: the opening events and `text`'s deltas), then keep-alives every `every_ms`
   * (default 1000) and never any content, until the client gives up: SSE comments (`: keepalive`;
   * anthropic: `event: ping`), or single spaces in a body that never comes */
  z.strictObject({
    ...stepBase,
    kind: z.literal('keepalive'),
    every_ms: z.number().int().min(1).max(KEEPALIVE_EVERY_MS_MAX).optional(),
    text: z.string().optional(),
  }),
]);

/** Keyed by the model id as sent on the wire (e.g. "openai/gpt-oss-20b", "gemini-2.5-flash");
 * key "*" applies to every model without its own script. */
export const scriptMapSchema = z.record(z.string(), z.array(scriptStepSchema).min(1));

/** Probabilities (0..1) per fault kind; the rest of the mass is `ok`. */
export const chaosSchema = z
  .strictObject({
    seed: z.number().int().optional(),
    rate_limit: probability.optional(),
    server_error: probability.optional(),
    drop: probability.optional(),
    provider_error: probability.optional(),
    refusal: probability.optional(),
    truncated: probability.optional(),
    invalid: probability.optional(),
  })
  .superRefine((chaos, ctx) => {
    // a probability out of 0..1 is reported on its own; the sum is about the valid ones
    const total = CHAOS_FAULTS.reduce((sum, fault) => {
      const p = chaos[fault];
      return typeof p === 'number' && p >= 0 && p <= 1 ? sum + p : sum;
    }, 0);
    if (total > 1 + 1e-9) {
      ctx.addIssue({
        code: 'custom',
        message: `the fault probabilities add up to ${Number(total.toFixed(6))}, more than 1`,
        params: { hint: 'lower the probabilities so they add up to at most 1 (the rest is ok)' },
      });
    }
  });

const limitLevel = z.number().int().min(1).max(100_000);

/** Structural limits of one model (lib/sim/limits.ts): past them its answers break the schema, more often the further past. */
export const modelLimitsSchema = z.strictObject({
  /** containers open at once in an answer, the root included */
  depth: limitLevel.optional(),
  /** items of the longest list (minItems) */
  list: limitLevel.optional(),
  /** values of the largest enum */
  enum: limitLevel.optional(),
});

/** Keyed like scripts: the model id as sent on the wire, or "*" for every model without its own. */
export const limitsMapSchema = z.record(z.string(), modelLimitsSchema);

/** The keys a scenario file and aqven.yaml's `simulate:` block share. */
export const scenarioShape = {
  scripts: scriptMapSchema,
  chaos: chaosSchema,
  latency: latencySchema,
  limits: limitsMapSchema,
};

/** A scenario file of `aqven sim --scenario FILE`. */
export const scenarioSchema = z.strictObject({
  scripts: scenarioShape.scripts.optional(),
  // null: no chaos, as in POST /_sim/chaos
  chaos: scenarioShape.chaos.nullish(),
  latency: scenarioShape.latency.optional(),
  limits: scenarioShape.limits.optional(),
});

export type Usage = z.output<typeof usageSchema>;
export type Latency = z.output<typeof latencySchema>;
export type ScriptStep = z.output<typeof scriptStepSchema>;
export type ScriptMap = z.output<typeof scriptMapSchema>;
export type ChaosProfile = z.output<typeof chaosSchema>;
export type SimModelLimits = z.output<typeof modelLimitsSchema>;
export type SimLimits = z.output<typeof limitsMapSchema>;
/** A parsed scenario, ready for `startSimulator` (a null chaos is left out). */
export interface Scenario {
  scripts?: ScriptMap;
  chaos?: ChaosProfile;
  latency?: Latency;
  limits?: SimLimits;
}
