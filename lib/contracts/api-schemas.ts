// The bodies the HTTP API answers with, as zod schemas (DESIGN: The run record; The dashboard,
// "The API described"): the route registry (api-routes.ts) names them, the handlers answer through
// them (`reply`), and GET /api/openapi.json describes them. Objects list every field the answer has
// at its top level; the nested parts the record documents elsewhere (an attempt's request, a
// node's policy) are open objects, so a field added there is no breaking change.
import { z } from 'zod';

/** The named schemas: components of the OpenAPI document, each referred to by name. */
export const components = z.registry<{ name: string }>();

/**
 * An object with these fields and any others (JSON Schema: open); typed as the fields alone, so an
 * interface with more of them fits where a handler answers with it.
 */
/** an object whose fields are documented elsewhere: any fields */
const anyObject = z.looseObject({}) as unknown as z.ZodType<object>;

function open<S extends z.ZodRawShape>(shape: S): z.ZodType<z.output<z.ZodObject<S>>, z.input<z.ZodObject<S>>> {
  return z.looseObject(shape) as unknown as z.ZodType<z.output<z.ZodObject<S>>, z.input<z.ZodObject<S>>>;
}

/** the pieces the run's answers share (the events' schemas too: run-event-schemas.ts) */
export const ms = z.number().describe('epoch milliseconds');
const iso = z.string().describe('ISO 8601 time');
export const runStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'interrupted', 'cancelled']);
const runKind = z.enum(['flow', 'replay', 'limits']);
export const usage = z.object({
  inputTokens: z.number().describe('input tokens the provider reported'),
  outputTokens: z.number().describe('output tokens the provider reported, reasoning tokens included'),
  costUsd: z.number().describe('what they cost in USD, rounded to 6 decimals; an unpriced attempt adds nothing (its costSource is none)'),
});
export const runError = z.object({
  code: z.string().describe('what ended it: one of the codes of docs/errors.md, "What a failed run or node reports" (aqven explain CODE prints its page)'),
  node: z.string().nullable().describe('the node that failed the run; null when no node did (the run could not go on, or was stopped before any ran)'),
  message: z.string().describe('what happened, one line; redacted like all failure text'),
  hint: z.string().nullable().describe('what to change, ending with "see: aqven explain CODE"; null in runs recorded before hints were kept'),
});

const attempt = open({
  seq: z.number().int().describe("the attempt's number in its node, from 1"),
  model: z.string().describe('the model it asked, "provider:model-id"'),
  chainIndex: z.number().int().describe("the model's place in the agent's chain: 0 its model, 1 the first of fallback_models, …"),
  answerNo: z.number().int().describe('which answer of this model for the node it was, 1 … output.retries + 1 (a not_sent attempt carries the number it would have had)'),
  outcome: z
    .string()
    .nullable()
    .describe('ok, error, refusal or truncated, decided from the finish reason before anything is parsed; null for an attempt a stopped process cut off'),
  finishReason: z.string().nullable().describe("the provider's finish reason; null when it sent none"),
  nativeFinishReason: z
    .string()
    .nullable()
    .describe("the upstream model's own finish reason behind a router's (OpenRouter's native_finish_reason), which can decide the outcome; null when none was sent"),
  finishNote: z.string().nullable().describe('an ok answer whose finish reason decided nothing: "unrecognised finish reason `eos`", "no finish reason"; null otherwise'),
  cause: z.string().nullable().describe('why it did not end the node well: provider_error, refusal, truncated, invalid_output or quota; null for a good answer'),
  action: z.string().nullable().describe('what came next: retry, fallback, repair, or none (the node ended on it)'),
  discarded: z.boolean().describe('its answer was dropped (a retry, a fallback or a repair followed)'),
  usage: usage.describe("the attempt's tokens and cost"),
  usageUnknown: z.boolean().describe('the reply was not read to its end (size limit, timeout, break) or reported no usage: usage is a lower bound, never a zero to trust'),
  reasoningTokens: z.number().nullable().describe('reasoning tokens the provider stated apart (already part of usage.outputTokens); null when none were stated'),
  costSource: z
    .enum(['provider', 'catalogue', 'none'])
    .nullable()
    .describe("whose price usage.costUsd is: the provider's stated charge, the catalogue's, or none — the cost is unknown (an unpriced model), not $0; null: nothing to price"),
  usageLookup: z
    .enum(['pending', 'found', 'gave_up'])
    .nullable()
    .describe(
      'the usage of a reply cut off after a 2xx, looked up from the provider afterwards: pending while a lookup waits, gave_up, or found (its usage is in usage); null when none was looked up',
    ),
  latencyMs: z.number().nullable().describe('from its start to its end; null while it has no end'),
  error: z
    .object({
      kind: z.string().describe('provider_error, refusal, truncated, invalid_output, transport, client_error, quota or not_sent (the rate gate refused to send it: no answer)'),
      message: z.string().describe('what went wrong, one line (redacted, capped)'),
      detail: z.string().nullable().describe("the provider's error body or the answer's text, redacted and capped; null when there is none"),
      validationErrors: z
        .array(z.object({ pointer: z.string().describe('JSON pointer into the answer'), message: z.string().describe('what is wrong there') }))
        .describe("an invalid answer's schema errors (redacted, capped); empty otherwise"),
    })
    .nullable()
    .describe('why the attempt failed; null for a good answer'),
  transport: z
    .array(
      z.object({
        try: z.number().int().describe('the try, from 1: a transport re-try (429, 5xx, timeout, dropped connection) sends the same request again'),
        status: z.number().int().nullable().describe('the HTTP status; null when none came (a timeout, a connection error, not sent)'),
        error: z
          .string()
          .nullable()
          .describe(
            'timeout, connection, rate_limited, server_error, client_error or cut_off (sent, and the run stopped before the answer was read); null for a try that answered',
          ),
        retryAfterMs: z.number().nullable().describe('the wait the provider asked for (Retry-After), in ms; null when it asked none'),
        waitedMs: z.number().describe('how long AQVEN waited before this try'),
        discardedText: z.string().nullable().describe('what the try streamed before its connection broke and the attempt started afresh (redacted, capped); null otherwise'),
      }),
    )
    .describe("the attempt's HTTP tries, in order"),
  request: z
    .array(z.object({ role: z.enum(['system', 'user', 'assistant']).describe('whose message'), content: z.string().describe('its text') }))
    .describe('the messages as sent, as stored: a failed answer quoted back in a repair redacted, every message under full redaction'),
});

const node = open({
  id: z.string().describe("the node's id in the flow"),
  agent: z.string().describe('the agent it ran (agents/NAME.yaml)'),
  turn: z.number().int().describe('the turn of the run loop it ran in; 0 for a node never reached (listed last)'),
  status: z
    .enum(['pending', 'running', 'succeeded', 'failed', 'skipped'])
    .describe('pending, running, succeeded, failed, or skipped (a node it needs failed, or an on_fail route whose source did not fail)'),
  output: z.unknown().describe('its validated JSON value, or its text for a node without an output schema; null unless it succeeded'),
  error: open({
    code: z.string().describe('one of the codes of docs/errors.md, "What a failed run or node reports"'),
    message: z.string().describe('what happened, one line; redacted'),
    hint: z.string().describe('what to change (the field and the file), ending with "see: aqven explain CODE"'),
  })
    .nullable()
    .describe('why it failed; null unless it failed'),
  usage: usage.describe('the sum of its attempts'),
  budget: z
    .object({
      retries: z.number().int().describe("the agent's output.retries"),
      models: z
        .array(
          z.object({
            model: z.string().describe('a model of the chain'),
            answers: z.number().int().describe('answers it gave this node'),
            limit: z.number().int().describe('answers it may give: output.retries + 1'),
          }),
        )
        .describe('answers used per model of the chain, against their limit'),
    })
    .describe("the answer budget as the node left it (the run page's gauge)"),
  attempts: z.array(attempt).describe('its model calls, in order'),
});

/** The run record (DESIGN: The run record): `GET /api/runs/:id`, and `POST /api/runs` when the run ended within its wait. */
export const runRecordSchema = z
  .object({
    id: z.string().describe("the run's id (its first 8 characters are its short id)"),
    flow: z.string().describe('the flow it ran (flows/NAME.yaml)'),
    kind: runKind.describe('flow: a run of the flow; replay: one node of another run run again; limits: a structural-limits probe'),
    replayOf: z.string().nullable().describe("a replay's original run; null once that run was purged, and for another kind"),
    replayNode: z.string().nullable().describe('the node a replay ran again; null for another kind'),
    status: runStatus.describe('queued, running, succeeded, failed, interrupted (stopped from outside, or its process died) or cancelled'),
    input: z.unknown().describe('the input it was started with'),
    output: z.unknown().describe('the outputs of its last nodes, by node id; null unless it succeeded'),
    error: runError.nullable().describe('why it failed or was interrupted; null otherwise'),
    usage: usage.describe('the sum of its nodes'),
    usageUnknown: z.boolean().describe("some attempt's usage is unknown: usage is a lower bound"),
    startedAt: iso.describe('when it started (ISO 8601, UTC)'),
    finishedAt: iso.nullable().describe('when it ended; for an interrupted run, when its owner was last seen alive; null while it runs'),
    startedBy: z.string().nullable().describe("who started it: a user's name, token:NAME or cli:LOGIN; null when not known"),
    projectHash: z.string().nullable().describe("sha256 (hex) of the project's files it ran under; null in runs recorded before it was kept"),
    snapshotId: z.number().int().nullable().describe('the project snapshot it ran under (PostgreSQL mode); null when the project is a folder'),
    traceId: z.string().optional().describe("the W3C trace id of the run's spans (a traceparent it was started with, or the trace AQVEN exported); absent when none"),
    nodes: z.array(node).describe('its nodes, in the order they ran; the ones never reached last'),
  })
  .register(components, { name: 'RunRecord' });

/** `POST /api/runs`'s 202: the run's id (its record is at the Location). */
export const runStartedSchema = z.object({ id: z.string() }).register(components, { name: 'RunStarted' });

const runListItem = z.object({
  id: z.string(),
  flow: z.string(),
  status: runStatus,
  errorCode: z.string().nullable(),
  errorNode: z.string().nullable(),
  turns: z.number().int(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
  startedAt: ms,
  finishedAt: ms.nullable(),
  attempts: z.number().int(),
  kind: runKind,
  replayOf: z.string().nullable(),
  replayNode: z.string().nullable(),
  routedAround: z.boolean(),
});

/** `GET /api/runs`: a page of the run list, newest first. */
export const runListSchema = z.object({ items: z.array(runListItem), nextCursor: z.string().nullable() }).register(components, { name: 'RunList' });

/** `GET /api/runs/:id/detail`: every stored fact of one run (the run page's timeline). */
export const runFactsSchema = open({
  id: z.string(),
  flow: z.string(),
  status: runStatus,
  input: z.unknown(),
  output: z.unknown(),
  error: runError.nullable(),
  turns: z.number().int(),
  startedAt: ms,
  finishedAt: ms.nullable(),
  nodes: z.array(open({ id: z.string(), agent: z.string(), status: z.string(), attempts: z.array(open({ seq: z.number().int() })) })),
}).register(components, { name: 'RunFacts' });

/** `GET /api/runs/:id/notes`: a page of notes, oldest first, and the cursor of older ones. */
export const notesPageSchema = z
  .object({ notes: z.array(open({ id: z.number().int(), body: z.string(), author: z.string() })), older: z.string().nullable() })
  .register(components, { name: 'NotesPage' });

/** The run a short id or prefix could mean (409 E_AMBIGUOUS_RUN_ID). */
export const ambiguousRunSchema = z.object({
  error: z.string(),
  code: z.literal('E_AMBIGUOUS_RUN_ID'),
  matches: z.array(open({ id: z.string() })),
  more: z.boolean(),
});

export const pausesSchema = z.object({ pauses: z.array(z.object({ model: z.string(), pausedUntil: ms })) }).register(components, { name: 'Pauses' });

export const limitsSchema = z.object({ models: z.array(anyObject), probes: z.array(anyObject) }).register(components, { name: 'ModelLimits' });

export const replayBatchSchema = open({
  id: z.string(),
  label: z.string(),
  startedBy: z.string().nullable(),
  startedAt: ms,
  total: z.number().int(),
  counts: z.record(z.string(), z.number().int()),
  done: z.boolean(),
  stopped: z.string().nullable(),
  items: z.array(anyObject),
}).register(components, { name: 'ReplayBatch' });

/** `/api/sim/scripts`'s body: per-model scripts, and a chaos profile (null: the project's). */
export const simScriptsBodySchema = z.object({ scripts: z.record(z.string(), z.array(anyObject)).optional(), chaos: z.unknown().optional() });
export const okSchema = z.object({ ok: z.literal(true) });

/** The OpenAPI document itself (its shape is OpenAPI 3.1's). */
export const openApiSchema = open({ openapi: z.string(), info: open({ title: z.string(), version: z.string() }), paths: anyObject });
