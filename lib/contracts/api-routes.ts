// Every route of the HTTP API, registered (DESIGN: The dashboard, "The API described"): each
// handler in app/api/ parses and answers through its definition here, and GET /api/openapi.json is
// generated from API_ROUTES (openapi.ts). A new route: define it here with defineRoute, list it in
// API_ROUTES, answer through `reply(ROUTE, status, body)`; test/api/openapi.test.ts then calls it.
import { z } from 'zod';
import { apiError, AUTH_CODE, CALLER_ANSWERS, defineRoute, UNAVAILABLE_CODE, type ApiHeader } from './api-route';
import {
  ambiguousRunSchema,
  limitsSchema,
  notesPageSchema,
  okSchema,
  openApiSchema,
  pausesSchema,
  replayBatchSchema,
  runFactsSchema,
  runListSchema,
  runRecordSchema,
  runStartedSchema,
  simScriptsBodySchema,
} from './api-schemas';
import { KEY_CODE, KEY_IN_FLIGHT_CODE, KEY_REUSED_CODE, IDEMPOTENCY_KEY_MAX } from './idempotency-key';
import { INPUT_CODE } from './input-size';
import { LIMIT_CODE } from './caller-limits';
import { RUN_CODE } from './cancel-run';
import { recordId } from './record-id';
import { EVENT_ID_CODE, RUN_EVENTS } from './run-event-schemas';
import { BODY_CODE } from './request-body';
import { FLOW_CODE, startRunSchema } from './start-run';
import { WAIT_CODE, WAIT_MAX_S } from './prefer-wait';

/** a query parameter the route cannot use */
export const QUERY_CODE = 'E_QUERY';
/** no replay batch with that id is stored */
export const BATCH_CODE = 'E_BATCH';
/** the run database cannot record a run now */
export const STORAGE_CODE = 'E_STORAGE';
/** the project no longer passes check */
export const PROJECT_CODE = 'E_PROJECT';
/** the daily spend budget is spent */
export const BUDGET_CODE = 'E_BUDGET';
/** the in-process simulator's route while providers are not simulated */
export const NOT_SIMULATED_CODE = 'E_NOT_SIMULATED';
/** a simulator script or chaos profile that does not validate */
export const SCRIPT_CODE = 'E_SCRIPT';
export const AMBIGUOUS_RUN_CODE = 'E_AMBIGUOUS_RUN_ID';

const LOCATION: ApiHeader = { description: 'the run record: /api/runs/{id}' };
const REPLAYED: ApiHeader = { description: '`true` when an earlier request with this Idempotency-Key started the run: nothing was started' };
const RETRY_AFTER: ApiHeader = { description: 'seconds until the caller may try again' };
const runParams = z.object({ id: recordId.describe('a run id, its 8-character short id, or a unique prefix') });

/** the refusals of a route that names a run (lib/server/run-route.ts) */
const RUN_NAMED = {
  404: { description: 'no run has this id, short id or prefix', body: apiError([RUN_CODE]), codes: [RUN_CODE] },
  409: { description: 'the prefix could mean several runs (the newest are listed)', body: ambiguousRunSchema, codes: [AMBIGUOUS_RUN_CODE] },
} as const;

export const LIST_RUNS = defineRoute({
  id: 'listRuns',
  method: 'get',
  path: '/api/runs',
  summary: 'The run list, newest first, a page at a time',
  auth: 'viewer',
  query: z.object({
    status: z.string().optional(),
    flow: z.string().optional(),
    agent: z.string().optional(),
    model: z.string().optional(),
    cause: z.string().optional(),
    retried: z.string().optional(),
    fell_back: z.string().optional(),
    kind: z.string().optional(),
    range: z.string().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    limit: z.string().optional().describe('1 to 500, default 50'),
    cursor: z.string().optional().describe("a previous page's nextCursor"),
  }),
  answers: {
    200: { description: 'a page of runs', body: runListSchema },
    400: { description: 'a filter or cursor the list cannot use', body: apiError([QUERY_CODE]), codes: [QUERY_CODE] },
  },
});

const START_REFUSED = [BODY_CODE, FLOW_CODE, INPUT_CODE, PROJECT_CODE, WAIT_CODE, KEY_CODE] as const;

export const START_RUN = defineRoute({
  id: 'startRun',
  method: 'post',
  path: '/api/runs',
  summary: 'Start a run of a flow; wait for its end with Prefer: wait=N; never twice with an Idempotency-Key',
  auth: 'editor',
  headers: {
    Prefer: { description: `wait=N (RFC 7240): answer 200 with the run record if the run ends within N seconds (0 to ${WAIT_MAX_S}; more waits ${WAIT_MAX_S}), else 202` },
    'Idempotency-Key': {
      description: `at most ${IDEMPOTENCY_KEY_MAX} printable ASCII characters, plain or as a quoted string: the same caller, key and body within 24 h get the same run and start nothing`,
    },
    traceparent: {
      description:
        "W3C Trace Context: the run's spans continue the caller's trace, its run span a child of this span (also in PostgreSQL mode, where a worker runs it); a malformed one is ignored and the run starts its own trace",
    },
  },
  body: startRunSchema,
  answers: {
    200: {
      description: 'the run ended within the wait asked (Prefer: wait=N), or had ended when an earlier request with this Idempotency-Key started it: its run record',
      body: runRecordSchema,
      headers: { 'Preference-Applied': { description: 'wait=N, the wait honoured (absent when no wait was asked)' }, Location: LOCATION, 'Idempotent-Replayed': REPLAYED },
    },
    202: {
      description: 'the run is started or queued (or was, by the same Idempotency-Key); its record is at Location',
      body: runStartedSchema,
      headers: { Location: LOCATION, 'Idempotent-Replayed': REPLAYED },
    },
    400: { description: 'a bad body, flow, input, Prefer: wait or Idempotency-Key', body: apiError(START_REFUSED), codes: START_REFUSED },
    404: { description: 'the project has no such flow', body: apiError([FLOW_CODE]), codes: [FLOW_CODE] },
    409: {
      description: 'a request with this Idempotency-Key is still starting its run',
      body: apiError([KEY_IN_FLIGHT_CODE]),
      codes: [KEY_IN_FLIGHT_CODE],
      headers: { 'Retry-After': RETRY_AFTER },
    },
    413: { description: 'the body is larger than AQVEN_MAX_BODY_BYTES', body: apiError([BODY_CODE]), codes: [BODY_CODE] },
    422: { description: 'the Idempotency-Key was used with another body within 24 h', body: apiError([KEY_REUSED_CODE]), codes: [KEY_REUSED_CODE] },
    429: {
      description: "the caller's runs per minute or daily spend budget",
      body: apiError([LIMIT_CODE, BUDGET_CODE]),
      codes: [LIMIT_CODE, BUDGET_CODE],
      headers: { 'Retry-After': RETRY_AFTER },
    },
    503: { description: 'the run cannot be recorded, or who is asking cannot be read', body: apiError([STORAGE_CODE, UNAVAILABLE_CODE]), codes: [STORAGE_CODE, UNAVAILABLE_CODE] },
  },
});

export const RUN_RECORD = defineRoute({
  id: 'getRun',
  method: 'get',
  path: '/api/runs/{id}',
  summary: 'The run record; ?wait=N holds the answer until the run ends or N seconds pass',
  auth: 'viewer',
  params: runParams,
  query: z.object({ wait: z.string().optional().describe(`seconds to wait for the run to end, 0 to ${WAIT_MAX_S} (more waits ${WAIT_MAX_S})`) }),
  answers: {
    200: { description: 'the run record (still queued or running when the wait ran out)', body: runRecordSchema },
    400: { description: 'a wait that is no whole number of seconds', body: apiError([WAIT_CODE]), codes: [WAIT_CODE] },
    ...RUN_NAMED,
  },
});

export const RUN_DETAIL = defineRoute({
  id: 'getRunFacts',
  method: 'get',
  path: '/api/runs/{id}/detail',
  summary: "Every stored fact of one run (the run page's timeline)",
  auth: 'viewer',
  params: runParams,
  answers: { 200: { description: "the run's facts", body: runFactsSchema }, ...RUN_NAMED },
});

export const RUN_NOTES = defineRoute({
  id: 'listRunNotes',
  method: 'get',
  path: '/api/runs/{id}/notes',
  summary: 'The notes of one run, a page at a time',
  auth: 'viewer',
  params: runParams,
  query: z.object({ limit: z.string().optional().describe('1 to 500, default 100'), before: z.string().optional().describe('the `older` cursor of the page after') }),
  answers: {
    200: { description: 'the newest notes before the cursor, oldest first', body: notesPageSchema },
    400: { description: 'a limit or cursor the route cannot use', body: apiError([QUERY_CODE]), codes: [QUERY_CODE] },
    ...RUN_NAMED,
  },
});

export const RUN_EVENTS_STREAM = defineRoute({
  id: 'followRun',
  method: 'get',
  path: '/api/runs/{id}/events',
  summary: 'A run\'s events as Server-Sent Events until it ends (docs/WIRE.md, "A run\'s events"); Last-Event-ID or ?after= resumes after a cut',
  auth: 'viewer',
  params: runParams,
  query: z.object({ after: z.string().optional().describe('the id of the last event received, for a client that cannot send Last-Event-ID') }),
  headers: { 'Last-Event-ID': { description: 'the id of the last event received: the stream goes on after it, nothing repeated, nothing lost' } },
  answers: {
    200: { description: "the run's events, from the start or after the id given; a keep-alive comment every 15 s of quiet; ends after run.ended", events: RUN_EVENTS },
    204: { description: 'the id given is after the run ended: nothing more (EventSource stops reconnecting)' },
    400: { description: 'Last-Event-ID (or after) is not the id of an event of this run', body: apiError([EVENT_ID_CODE]), codes: [EVENT_ID_CODE] },
    ...RUN_NAMED,
  },
});

export const PAUSES = defineRoute({
  id: 'listPauses',
  method: 'get',
  path: '/api/pauses',
  summary: 'The rate-limit pauses not over yet',
  auth: 'viewer',
  answers: { 200: { description: 'model and until when', body: pausesSchema } },
});

export const LIMITS = defineRoute({
  id: 'getModelLimits',
  method: 'get',
  path: '/api/limits',
  summary: "Models' newest measured structural limits and this process's probes of them",
  auth: 'viewer',
  query: z.object({ model: z.array(z.string()).describe('provider:model-id, repeated for more (1 to 50)') }),
  answers: {
    200: { description: 'the limits and probes', body: limitsSchema },
    400: { description: 'no model named, or more than 50', body: apiError([QUERY_CODE]), codes: [QUERY_CODE] },
  },
});

export const REPLAY_BATCH = defineRoute({
  id: 'getReplayBatch',
  method: 'get',
  path: '/api/replays/{batchId}',
  summary: "A replay batch's progress",
  auth: 'viewer',
  params: z.object({ batchId: z.string() }),
  answers: {
    200: { description: 'the batch, from any server process', body: replayBatchSchema },
    404: { description: 'no batch with this id is stored (or it was purged)', body: apiError([BATCH_CODE]), codes: [BATCH_CODE] },
  },
});

export const SIM_SCRIPTS = defineRoute({
  id: 'loadSimScripts',
  method: 'post',
  path: '/api/sim/scripts',
  summary: "Load per-model scripts into the in-process simulator (AQVEN_SIMULATE=1 only; tests' control)",
  auth: 'editor',
  body: simScriptsBodySchema,
  answers: {
    200: { description: 'loaded', body: okSchema },
    400: { description: 'not JSON, or a script or chaos profile that does not validate', body: apiError([BODY_CODE, SCRIPT_CODE]), codes: [BODY_CODE, SCRIPT_CODE] },
    404: { description: 'the dashboard does not simulate providers', body: apiError([NOT_SIMULATED_CODE]), codes: [NOT_SIMULATED_CODE] },
    409: { description: 'this session does not simulate providers', body: apiError([NOT_SIMULATED_CODE]), codes: [NOT_SIMULATED_CODE] },
    413: { description: 'the body is larger than AQVEN_MAX_BODY_BYTES', body: apiError([BODY_CODE]), codes: [BODY_CODE] },
  },
});

export const OPENAPI = defineRoute({
  id: 'getOpenApi',
  method: 'get',
  path: '/api/openapi.json',
  summary: 'This document: the HTTP API in OpenAPI 3.1',
  auth: 'none',
  answers: { 200: { description: 'the OpenAPI document', body: openApiSchema } },
});

/** the media type of Prometheus's text exposition format, as prom-client answers it */
export const METRICS_MEDIA_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export const METRICS = defineRoute({
  id: 'getMetrics',
  method: 'get',
  path: '/metrics',
  summary: 'This process\'s metrics for Prometheus: attempts, latencies, tokens, cost, tries, pauses, runs, the queue, redactions (docs/monitoring.md, "Metrics")',
  auth: 'metrics',
  answers: {
    200: {
      description: "Prometheus's text exposition format 0.0.4",
      text: { mediaType: METRICS_MEDIA_TYPE, description: 'one sample per line: `aqven_…{label="value"} number`, after its # HELP and # TYPE' },
    },
    401: {
      description: 'neither from this machine nor with a token made by `aqven token create NAME --scope metrics`',
      body: apiError([AUTH_CODE]),
      codes: [AUTH_CODE],
      headers: { 'WWW-Authenticate': { description: '`Bearer`' } },
    },
    503: {
      description: 'the run database cannot be read, so the token cannot be checked',
      body: apiError([UNAVAILABLE_CODE]),
      codes: [UNAVAILABLE_CODE],
      headers: { 'Retry-After': RETRY_AFTER },
    },
  },
});

/** Every route of the API, in the document's order. */
export const API_ROUTES = [LIST_RUNS, START_RUN, RUN_RECORD, RUN_DETAIL, RUN_NOTES, RUN_EVENTS_STREAM, PAUSES, LIMITS, REPLAY_BATCH, SIM_SCRIPTS, OPENAPI, METRICS] as const;

export { CALLER_ANSWERS };
