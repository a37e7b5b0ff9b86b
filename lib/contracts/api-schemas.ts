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
export const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });
export const runError = z.object({ code: z.string(), node: z.string().nullable(), message: z.string(), hint: z.string().nullable() });

const attempt = open({
  seq: z.number().int(),
  model: z.string(),
  outcome: z.string().nullable(),
  cause: z.string().nullable(),
  action: z.string().nullable(),
  discarded: z.boolean(),
  usage,
});

const node = open({
  id: z.string(),
  agent: z.string(),
  turn: z.number().int(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  output: z.unknown(),
  error: open({ code: z.string(), message: z.string() }).nullable(),
  usage,
  attempts: z.array(attempt),
});

/** The run record (DESIGN: The run record): `GET /api/runs/:id`, and `POST /api/runs` when the run ended within its wait. */
export const runRecordSchema = z
  .object({
    id: z.string(),
    flow: z.string(),
    kind: runKind,
    replayOf: z.string().nullable(),
    replayNode: z.string().nullable(),
    status: runStatus,
    input: z.unknown(),
    output: z.unknown(),
    error: runError.nullable(),
    usage,
    usageUnknown: z.boolean(),
    startedAt: iso,
    finishedAt: iso.nullable(),
    startedBy: z.string().nullable(),
    projectHash: z.string().nullable(),
    snapshotId: z.number().int().nullable(),
    traceId: z.string().optional().describe("the W3C trace id of the run's spans (a traceparent it was started with, or the trace AQVEN exported); absent when none"),
    nodes: z.array(node),
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
