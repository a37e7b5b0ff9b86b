// The events of GET /api/runs/:id/events (DESIGN: "A run's events"; docs/WIRE.md): each event's
// name and the shape of its `data`, as the route registry documents them (api-routes.ts, RUN_EVENTS)
// and as lib/flow/run-events.ts builds them (its RunEvent type names exactly these; its test checks
// the events it makes against these schemas). Open objects where the run's facts have more fields.
import { z } from 'zod';
import { ms, runError, runStatus, usage } from './api-schemas';

const open = <S extends z.ZodRawShape>(shape: S) => z.looseObject(shape);
const nodeError = z.object({ code: z.string(), message: z.string(), hint: z.string() });

const runHead = open({
  id: z.string(),
  flow: z.string(),
  status: runStatus,
  input: z.unknown(),
  turns: z.number().int(),
  startedAt: ms,
  startedBy: z.string().nullable(),
  projectHash: z.string().nullable(),
  snapshotId: z.number().int().nullable(),
});

const nodeHead = open({
  id: z.string(),
  agent: z.string(),
  turn: z.number().int(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  output: z.unknown(),
  error: nodeError.nullable(),
  policy: z.unknown(),
  startedAt: ms.nullable(),
  finishedAt: ms.nullable(),
});

const attemptHead = open({
  node: z.string().describe("the node's id"),
  seq: z.number().int().describe('1… within the node'),
  model: z.string(),
  chainIndex: z.number().int(),
  answerNo: z.number().int(),
  outcome: z.enum(['ok', 'error', 'refusal', 'truncated']).nullable().describe('null while in flight, or when cut off'),
  cause: z.string().nullable(),
  action: z.enum(['retry', 'fallback', 'repair', 'none']),
  discarded: z.boolean().describe('its answer was dropped: a client strikes its text through'),
  request: z.array(z.unknown()),
  error: open({ kind: z.string(), message: z.string() }).nullable(),
  usage,
  startedAt: ms,
  finishedAt: ms.nullable(),
});

const tryFacts = open({
  tryNo: z.number().int(),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  retryAfterMs: z.number().nullable(),
  waitedMs: z.number(),
  startedAt: ms,
  finishedAt: ms,
});

/** Every event's name and its data, in the order a run has them. */
export const RUN_EVENTS = {
  'run.queued': runHead,
  'run.started': runHead,
  'node.started': nodeHead,
  'attempt.started': attemptHead,
  'attempt.try': z.object({ node: z.string(), seq: z.number().int(), try: tryFacts }),
  'attempt.text': z.object({
    node: z.string(),
    seq: z.number().int(),
    from: z.number().int().describe('0: the text is replaced; else the length of the text sent before: appended'),
    text: z.string(),
  }),
  'attempt.ended': attemptHead,
  'node.ended': nodeHead,
  pause: z.object({
    model: z.string(),
    pausedUntil: ms,
    reason: z.string(),
    origin: z.object({ setAt: ms, serverWait: z.string().nullable(), askedMs: z.number(), maxWaitMs: z.number() }).nullable(),
  }),
  'run.ended': z.object({ status: runStatus, output: z.unknown(), error: runError.nullable(), turns: z.number().int(), finishedAt: ms.nullable() }),
} as const;

export type RunEventName = keyof typeof RUN_EVENTS;
export const RUN_EVENT_NAMES = Object.keys(RUN_EVENTS) as RunEventName[];

/** an event id that is no cursor of this run's stream */
export const EVENT_ID_CODE = 'E_EVENT_ID';
