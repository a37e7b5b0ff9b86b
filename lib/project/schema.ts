// The file formats of an AQVEN project (DESIGN: Project files) as zod schemas. Objects are
// strict: an unknown key is an error (E_FIELD). Defaults are those of the seed page
// ("What happens when a model is called": output.retries 1, on_error retry, on_refusal fail,
// on_truncated fail, strict false) and, for providers, PROVIDER_DEFAULTS (builtin-providers.ts).
// The `simulate:` block is the simulator's own schema (lib/sim/script-schema.ts).
//
// A custom issue carries `params: { code, hint }`; without a code an issue is E_FIELD.
import { z } from 'zod';
import { scenarioShape } from '../sim/script-schema';
import { PROVIDER_DEFAULTS, PROVIDER_LIMITS } from './builtin-providers';
import type { CheckCode } from './diagnostics';
import { envNameAllowed, envPattern } from './env';
import { formatDuration, parseDuration, RETENTION_HINT } from './duration';
import { durationSchema, waitSchema } from './duration-schema';
import { alertsSchema } from './alerts-schema';
import { LIMITS, quote } from './limits';
import { MODEL_HINT, modelStringProblem, parseModelString } from '../engine/model-string';
import { RETRIES_MAX } from '../engine/policy';

export const API_VERSION = 'aqven/v1';

export interface IssueParams {
  code?: CheckCode;
  hint?: string;
  /** report at the key of the path rather than its value */
  at?: 'key';
}

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const apiVersion = z.literal(API_VERSION, { error: `apiVersion must be "${API_VERSION}"` });
const kindOf = <K extends string>(kind: K) => z.literal(kind, { error: `kind must be "${kind}" here` });

/** a model string's shape for editors (the JSON Schemas' `pattern`); parseModelString is the rule itself */
export const MODEL_STRING_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]*:[A-Za-z0-9._:/@~-]+$';

export const modelStringSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (parseModelString(value) === null) {
      ctx.addIssue({ code: 'custom', message: modelStringProblem(value), params: { code: 'E_MODEL', hint: MODEL_HINT } });
    }
  })
  .meta({ description: '"provider:model-id", split at the first colon, e.g. "openrouter:openai/gpt-oss-20b"', pattern: MODEL_STRING_PATTERN });

export { DURATION_MAX, durationSchema, durationUpTo, waitSchema } from './duration-schema';

export const outcomePolicySchema = z.enum(['fail', 'retry', 'fallback']);
const RETRIES_WORDS = { error: `retries must be a whole number from 0 to ${RETRIES_MAX}` };
export const retriesSchema = z.number(RETRIES_WORDS).int(RETRIES_WORDS).min(0, RETRIES_WORDS).max(RETRIES_MAX, RETRIES_WORDS);

// ---------------------------------------------------------------------------------------------
// agents/NAME.yaml

export const agentSettingsSchema = z.looseObject({
  temperature: z.number().min(0).max(2).optional().describe('sampling temperature: 0 the most likely tokens, higher more varied'),
  max_tokens: z.number().int().positive().optional().describe('the most tokens the answer may have; an answer cut there ends truncated'),
  top_p: z.number().min(0).max(1).optional().describe('nucleus sampling: the share of probability mass sampled from'),
  stop: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('text at which the model stops'),
  seed: z.number().int().optional().describe('asks the provider for repeatable sampling, where it offers it'),
});

export const agentOutputSchema = z
  .strictObject({
    strict: z
      .boolean()
      .default(false)
      .describe('false: AQVEN validates the answer against the node schema and repairs it; true: the provider constrains generation (needs structured_outputs)'),
    retries: retriesSchema.default(1).describe('one model answers a node at most retries + 1 times; repairs and retries share it'),
    on_error: outcomePolicySchema.default('retry').describe('after an answer that ended with an error: fail the node, retry the same model, or fallback to the next model'),
    on_refusal: outcomePolicySchema.default('fail').describe('after a refusal: fail the node, retry the same model, or fallback to the next model'),
    on_truncated: outcomePolicySchema.default('fail').describe('after a truncated answer: fail the node, retry the same model, or fallback to the next model'),
  })
  .describe('what happens after each outcome of a call');

const OUTCOME_FIELDS = ['on_error', 'on_refusal', 'on_truncated'] as const;

/** Seed page: "aqven check rejects fallback on an agent that has no fallback_models". */
function outcomeFallbackRule(value: { fallback_models?: unknown; output?: Partial<Record<(typeof OUTCOME_FIELDS)[number], unknown>> }, ctx: z.RefinementCtx): void {
  const fallbacks = Array.isArray(value.fallback_models) ? value.fallback_models.length : 0;
  if (fallbacks > 0) return;
  for (const field of OUTCOME_FIELDS) {
    if (value.output?.[field] !== 'fallback') continue;
    ctx.addIssue({
      code: 'custom',
      path: ['output', field],
      message: `output.${field} is "fallback" but the agent has no fallback_models`,
      params: {
        code: 'E_OUTCOME_FALLBACK',
        hint: `add fallback_models (a list of "provider:model-id"), or set output.${field} to "retry" or "fail"`,
      } satisfies IssueParams,
    });
  }
}

/**
 * A model twice in an agent's chain (`model: m`, `fallback_models: [m]`) would answer more than
 * `output.retries + 1` times for a node (seed page): each repeat is an error at its entry.
 */
function chainDuplicateRule(value: { model?: unknown; fallback_models?: unknown }, ctx: z.RefinementCtx): void {
  if (!Array.isArray(value.fallback_models)) return;
  const seen = new Map<unknown, string>();
  if (typeof value.model === 'string') seen.set(value.model, 'model');
  value.fallback_models.forEach((m: unknown, i) => {
    if (typeof m !== 'string') return;
    const first = seen.get(m);
    if (first === undefined) return void seen.set(m, `fallback_models[${i}]`);
    ctx.addIssue({
      code: 'custom',
      path: ['fallback_models', i],
      message: `fallback_models[${i}] "${quote(m)}" is already in the agent's chain (${first}): one model would answer more than output.retries + 1 times`,
      params: {
        code: 'E_CHAIN_DUPLICATE',
        hint: 'remove the repeat, or name another model; to let one model answer more often, raise output.retries',
      } satisfies IssueParams,
    });
  });
}

export const agentFileSchema = z
  .strictObject({
    apiVersion,
    kind: kindOf('Agent'),
    description: z.string().optional().describe('shown on the dashboard'),
    model: modelStringSchema.describe('the model that answers first: "provider:model-id"'),
    fallback_models: z.array(modelStringSchema).default([]).describe('tried in order when an outcome policy says fallback'),
    system: z.string().optional().describe('the system prompt'),
    settings: agentSettingsSchema.default({}).describe('call settings passed to the provider: temperature, max_tokens, top_p, stop, seed, and any other the provider takes'),
    output: agentOutputSchema.prefault({}),
  })
  .describe('An AQVEN agent (agents/NAME.yaml): which model answers, its call settings, and its outcome policy')
  .superRefine(outcomeFallbackRule)
  .superRefine(chainDuplicateRule);

export type AgentFile = z.output<typeof agentFileSchema>;

/**
 * The subset of an agent the dashboard's policy form edits, in the file's own shape, with the
 * same rules as `aqven check` — including E_OUTCOME_FALLBACK (the issue's `params.code`).
 */
export const agentPolicyFormSchema = z
  .object({
    model: modelStringSchema,
    fallback_models: z.array(modelStringSchema),
    output: z.object({
      retries: retriesSchema,
      on_error: outcomePolicySchema,
      on_refusal: outcomePolicySchema,
      on_truncated: outcomePolicySchema,
      strict: z.boolean(),
    }),
  })
  .superRefine(outcomeFallbackRule)
  .superRefine(chainDuplicateRule);

export type AgentPolicyForm = z.output<typeof agentPolicyFormSchema>;

// ---------------------------------------------------------------------------------------------
// providers/NAME.yaml

const httpUrl = z.string().superRefine((value, ctx) => {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    // credentials in it are not repeated
    ctx.addIssue({
      code: 'custom',
      message: `base_url "${quote(value.replace(/\/\/[^/@]*@/, '//…@'))}" is not an http(s) URL`,
      params: { hint: 'write the full URL, e.g. "https://openrouter.ai/api/v1"' },
    });
  } else if (url.username !== '' || url.password !== '') {
    // the URL is not repeated: it holds a secret
    ctx.addIssue({
      code: 'custom',
      message: `base_url must not contain credentials ("user:password@" before the host ${quote(url.host)})`,
      params: { hint: 'remove them from the URL; the key is read from the environment variable named by api_key_env' },
    });
  }
});

/** The variable the key is read from: only one named for it (env.ts), so a pushed file cannot send another secret. */
const apiKeyEnvSchema = z.string().superRefine((name, ctx) => {
  if (!ENV_NAME.test(name)) {
    ctx.addIssue({
      code: 'custom',
      message: `api_key_env "${quote(name)}" is not the name of an environment variable`,
      params: { hint: 'write a variable name such as "MY_PROVIDER_API_KEY"' } satisfies IssueParams,
    });
  } else if (!envNameAllowed(name, 'api_key_env')) {
    ctx.addIssue({
      code: 'custom',
      message: `api_key_env names ${name}, a variable project files may not read: api_key_env takes only ${envPattern('api_key_env')}`,
      params: { code: 'E_ENV_NAME', hint: `export the key under an allowed name (e.g. MY_PROVIDER_API_KEY) and name that` } satisfies IssueParams,
    });
  }
});

export const modelCatalogueEntrySchema = z.strictObject({
  input_per_mtok: z.number().nonnegative().optional().describe('USD per million input tokens, for the cost of an attempt'),
  output_per_mtok: z.number().nonnegative().optional().describe('USD per million output tokens (reasoning tokens count as output)'),
  structured_outputs: z.boolean().optional().describe("this model can be constrained to a JSON schema; overrides the provider's structured_outputs"),
});

const BACKOFF_DEFAULT = PROVIDER_DEFAULTS.transport.backoff;

/** transport.backoff (DESIGN: Transport retry and rate limits): the wait before re-trying a failure that is not a rate limit. */
export const transportBackoffSchema = z
  .strictObject({
    base: waitSchema.default(BACKOFF_DEFAULT.baseMs).describe('the wait before the second try'),
    /** each next re-try waits this many times longer; 1: every re-try waits base */
    factor: z.number().min(1).max(10).default(BACKOFF_DEFAULT.factor).describe('each next wait is the last one times this'),
    cap: waitSchema.default(BACKOFF_DEFAULT.capMs).describe('the longest wait'),
    /** the largest fraction of a wait taken off at random: 0 none, 1 "full jitter" */
    jitter: z.number().min(0).max(1).default(BACKOFF_DEFAULT.jitter).describe('the largest fraction of a wait taken off at random: 0 none, 1 full jitter'),
  })
  .superRefine((b, ctx) => {
    if (b.cap >= b.base) return;
    ctx.addIssue({
      code: 'custom',
      path: ['cap'],
      message: `cap (${formatDuration(b.cap)}) is shorter than base (${formatDuration(b.base)}): no backoff could be as long as the first`,
      params: { hint: 'raise cap to at least base, or lower base' } satisfies IssueParams,
    });
  })
  .prefault({});

export const providerFileSchema = z
  .strictObject({
    apiVersion,
    kind: kindOf('Provider'),
    /** must equal the file name; checked by the loader */
    name: z.string().optional().describe('the provider name: must equal the file name'),
    /** required unless the file overrides a built-in provider; checked by the loader */
    api: z.enum(['openai', 'anthropic', 'gemini']).optional().describe('the wire protocol the server speaks'),
    base_url: httpUrl.optional().describe('the API base URL, without credentials'),
    api_key_env: apiKeyEnvSchema.optional().describe('the environment variable the key is read from (ending _API_KEY or _API_TOKEN); the key is never stored'),
    structured_outputs: z.boolean().optional().describe('the provider can constrain generation to a JSON schema (needed by output.strict: true)'),
    transport: z
      .strictObject({
        max_attempts: z
          .number()
          .int()
          .min(1)
          .max(20)
          .default(PROVIDER_DEFAULTS.transport.maxAttempts)
          .describe('HTTP tries of one answer after a transport failure (5xx, timeout, a dropped connection), the first included'),
        budget: durationSchema.default(PROVIDER_DEFAULTS.transport.budgetMs).describe("the most time one answer's tries and waits may take together"),
        timeout: durationSchema.default(PROVIDER_DEFAULTS.transport.timeoutMs).describe("the longest wait for a reply's headers"),
        idle_timeout: durationSchema.default(PROVIDER_DEFAULTS.transport.idleTimeoutMs).describe('the longest silence inside a reply (a stream that stops sending)'),
        try_deadline: durationSchema.default(PROVIDER_DEFAULTS.transport.tryDeadlineMs).describe('the most time one try may take, its whole reply read'),
        max_response_bytes: z
          .number()
          .int()
          .min(PROVIDER_LIMITS.maxResponseBytes.min)
          .max(PROVIDER_LIMITS.maxResponseBytes.max)
          .default(PROVIDER_DEFAULTS.transport.maxResponseBytes),
        backoff: transportBackoffSchema.describe('the wait before trying again after a failure that is not a rate limit'),
      })
      .prefault({}),
    on_rate_limit: z
      .strictObject({
        max_attempts: z
          .number()
          .int()
          .min(1)
          .max(50)
          .default(PROVIDER_DEFAULTS.onRateLimit.maxAttempts)
          .describe('HTTP tries of one answer while the provider answers 429, the first included'),
        default_wait: waitSchema.default(PROVIDER_DEFAULTS.onRateLimit.defaultWaitMs).describe('the pause after a 429 without a retry-after header'),
        max_wait: waitSchema.default(PROVIDER_DEFAULTS.onRateLimit.maxWaitMs).describe("the longest pause AQVEN takes, whatever the provider's retry-after asks"),
      })
      .prefault({}),
    max_concurrency: z.number().int().min(1).max(10_000).default(PROVIDER_DEFAULTS.maxConcurrency).describe('requests in flight per model, across the process'),
    models: z.record(z.string(), modelCatalogueEntrySchema).default({}).describe('the catalogue: prices in USD per 1M tokens and capabilities, by model id'),
  })
  .describe('An AQVEN provider (providers/NAME.yaml): where requests go and how they are retried');

export type ProviderFile = z.output<typeof providerFileSchema>;

// ---------------------------------------------------------------------------------------------
// aqven.yaml

/** A scenario's `chaos.seed` is welcome in `simulate:`, but two different seeds are ambiguous. */
function seedRule(sim: { seed?: number; chaos?: { seed?: number } | null }, ctx: z.RefinementCtx): void {
  const chaosSeed = sim.chaos?.seed;
  if (typeof sim.seed !== 'number' || typeof chaosSeed !== 'number' || sim.seed === chaosSeed) return;
  ctx.addIssue({
    code: 'custom',
    path: ['chaos', 'seed'],
    message: `simulate.chaos.seed (${chaosSeed}) differs from simulate.seed (${sim.seed})`,
    params: { hint: 'keep one of the two seeds' } satisfies IssueParams,
  });
}

/** How long runs are kept ("90d"; days allowed): `aqven runs purge` deletes older ones. */
export const retentionSchema = z.string().transform((value, ctx) => {
  const ms = parseDuration(value, { days: true });
  if (ms === null || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${quote(value)}" is not a retention period`, params: { hint: RETENTION_HINT } });
    return z.NEVER;
  }
  return ms;
});

export const projectFileSchema = z.strictObject({
  apiVersion,
  kind: kindOf('Project'),
  name: z.string().regex(NAME_PATTERN, { error: 'name may contain letters, digits, "-" and "_"' }).optional().describe("the project's name (letters, digits, - and _)"),
  database: z.string().min(1).default('.aqven/aqven.db').describe("the SQLite file runs are recorded in, from the project's folder (AQVEN_DATABASE_URL wins)"),
  retention: retentionSchema.optional().describe('how long runs are kept: aqven runs purge deletes runs started longer ago ("90d", "12h")'),
  alerts: alertsSchema.optional().describe('a webhook told when a failure starts (docs/monitoring.md, "Alerts"); absent: no alert'),
  simulate: z
    .strictObject({
      /** absent: chaos.seed, else 0 (resolved by the loader) */
      seed: z.number().int().optional().describe("the simulator's random seed: the same seed, the same answers"),
      chaos: scenarioShape.chaos.default({}).describe('the share of answers that go wrong, by kind (rate_limit, server_error, drop, provider_error, refusal, truncated, invalid)'),
      latency: scenarioShape.latency.default({}).describe('how slowly simulated models answer: time to the first token, tokens per second'),
      scripts: scenarioShape.scripts.default({}).describe('by model: the answers the simulator gives in order'),
      /** structural limits the simulated models play (`aqven limits --simulate` finds them) */
      limits: scenarioShape.limits.optional().describe('structural limits the simulated models play, found by aqven limits --simulate'),
    })
    .superRefine(seedRule)
    .prefault({}),
});

export type ProjectFile = z.output<typeof projectFileSchema>;

// ---------------------------------------------------------------------------------------------
// flows/NAME.yaml

const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]*$/;
export const jsonSchemaObject = z.record(z.string(), z.unknown(), { error: 'expected a JSON Schema object' });

export const flowNodeSchema = z.strictObject({
  agent: z.string().min(1).describe('the agent that answers: agents/NAME.yaml'),
  prompt: z.string().min(1).describe('the prompt; {{ input.x }} and {{ nodes.id.output.x }} take values'),
  needs: z.array(z.string()).default([]).describe('nodes that must succeed first'),
  output: jsonSchemaObject.optional().describe('the JSON Schema the answer must match; absent: text'),
  stream: z.boolean().default(false).describe('stream the text as it arrives'),
  on_fail: z.string().optional().describe('the node to run instead when this one fails'),
});

export const flowFileSchema = z
  .strictObject({
    apiVersion,
    kind: kindOf('Flow'),
    description: z.string().optional().describe('shown on the dashboard'),
    input: jsonSchemaObject.default({ type: 'object' }).describe("the JSON Schema of a run's input"),
    nodes: z
      .record(z.string(), flowNodeSchema)
      .superRefine((nodes, ctx) => {
        const ids = Object.keys(nodes);
        if (ids.length === 0) ctx.addIssue({ code: 'custom', message: 'a flow needs at least one node', params: { hint: 'add a node under nodes:' } });
        if (ids.length > LIMITS.flowNodes) {
          ctx.addIssue({
            code: 'custom',
            message: `the flow has ${ids.length} nodes; a flow may have at most ${LIMITS.flowNodes}`,
            params: { code: 'E_LIMIT', hint: 'split the flow into several flows', at: 'key' } satisfies IssueParams,
          });
          return;
        }
        for (const id of ids) {
          if (!NODE_ID.test(id)) {
            ctx.addIssue({
              code: 'custom',
              path: [id],
              message: `node id "${quote(id)}" may contain only letters, digits, "_" and "-" and must not start with a digit or "-"`,
              params: { hint: 'rename the node, e.g. "classify"; templates refer to it as nodes.<id>.output', at: 'key' } satisfies IssueParams,
            });
          }
        }
      })
      .describe('the nodes by id: which agent answers, its prompt and output schema, what it needs'),
  })
  .describe('An AQVEN flow (flows/NAME.yaml): its input schema and its nodes');

export type FlowFile = z.output<typeof flowFileSchema>;
