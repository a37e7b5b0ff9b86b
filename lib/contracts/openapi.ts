// GET /api/openapi.json (DESIGN: The dashboard, "The API described"): an OpenAPI 3.1 document
// generated from the route registry (api-routes.ts) — the same zod schemas the handlers parse and
// answer with, turned into JSON Schema 2020-12 by zod's own z.toJSONSchema. A schema with a `meta`
// id (RunRecord, …) is a component; every route that needs a caller also answers routeCaller's
// 401, 403 and 503. Pure: no request, no database.
import { z } from 'zod';
import { CALLER_ANSWERS, type ApiAnswer, type ApiHeader, type ApiRoute } from './api-route';
import { API_ROUTES } from './api-routes';
import { components as named } from './api-schemas';

type Json = Record<string, unknown>;

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const componentRef = (id: string) => `#/components/schemas/${id}`;

/** `schema` as JSON Schema: a $ref when it is a named component, else inline (a named part inside another inlined). */
function jsonSchema(schema: z.ZodType, components: Map<string, z.ZodType>): Json {
  const id = named.get(schema)?.name;
  if (id !== undefined) {
    components.set(id, schema);
    return { $ref: componentRef(id) };
  }
  return inline(schema);
}

function inline(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

function headersOf(h: Readonly<Record<string, ApiHeader>> | undefined): Json | undefined {
  if (!h) return undefined;
  return Object.fromEntries(Object.entries(h).map(([name, d]) => [name, { description: d.description, schema: { type: 'string' } }]));
}

/**
 * A Server-Sent Events answer: the body a string of events; each event's name and its data's schema
 * under `x-events` (OpenAPI 3.1 has no item schema for a stream of events).
 */
function eventStream(events: Readonly<Record<string, z.ZodType>>): Json {
  const description = 'Server-Sent Events: `id:` (the cursor after the event, for Last-Event-ID), `event:` (its name), `data:` (one line of JSON, shaped as x-events says)';
  return { 'text/event-stream': { schema: { type: 'string', description }, 'x-events': Object.fromEntries(Object.entries(events).map(([name, s]) => [name, inline(s)])) } };
}

function answerOf(a: ApiAnswer, components: Map<string, z.ZodType>): Json {
  const codes = a.codes?.length ? ` Codes: ${a.codes.join(', ')}.` : '';
  return {
    description: `${a.description}.${codes}`,
    ...(a.headers && { headers: headersOf(a.headers) }),
    ...(a.body && { content: { 'application/json': { schema: jsonSchema(a.body, components) } } }),
    ...(a.events && { content: eventStream(a.events) }),
    ...(a.text && { content: { [a.text.mediaType]: { schema: { type: 'string', description: a.text.description } } } }),
    ...(a.codes && { 'x-codes': a.codes }),
  };
}

/**
 * A route's answers: its own, and routeCaller's refusals when it needs a caller — 401 and 503 (its
 * own 503 already names E_UNAVAILABLE), and 403 only above viewer, the role every caller has.
 */
export function answersOf(route: ApiRoute): Readonly<Record<number, ApiAnswer>> {
  // GET /metrics names its own refusals (lib/observe/metrics-access.ts)
  if (route.auth === 'none' || route.auth === 'metrics') return route.answers;
  const { 403: forbidden, ...always } = CALLER_ANSWERS;
  const caller: Record<number, ApiAnswer> = route.auth === 'viewer' ? always : { ...always, 403: forbidden };
  return { ...caller, ...route.answers };
}

function parameters(route: ApiRoute): Json[] {
  const list: Json[] = [];
  const add = (where: 'path' | 'query', obj: z.ZodObject | undefined) => {
    if (!obj) return;
    for (const [name, s] of Object.entries(obj.shape)) {
      const schema = s as z.ZodType;
      const json = inline(schema);
      list.push({
        name,
        in: where,
        required: where === 'path' || !schema.safeParse(undefined).success,
        schema: json,
        ...(json.description ? { description: json.description } : {}),
      });
    }
  };
  add('path', route.params);
  add('query', route.query);
  for (const [name, h] of Object.entries(route.headers ?? {}))
    list.push({ name, in: 'header', required: h.required ?? false, description: h.description, schema: { type: 'string' } });
  return list;
}

/** who may call a route that is not by role: anyone; this machine (no credential) or a metrics token */
const SECURITY: Partial<Record<ApiRoute['auth'], Json[]>> = { none: [], metrics: [{}, { metricsToken: [] }] };

function operation(route: ApiRoute, components: Map<string, z.ZodType>): Json {
  const answers = answersOf(route);
  return {
    operationId: route.id,
    summary: route.summary,
    security: SECURITY[route.auth] ?? [{ sessionCookie: [] }, { bearerToken: [] }],
    ...(route.auth !== 'none' && route.auth !== 'metrics' && { 'x-aqven-role': route.auth }),
    ...(route.auth === 'metrics' && { 'x-aqven-access': 'a request from this machine (aqven serve, aqven worker --metrics-port), or a metrics token' }),
    parameters: parameters(route),
    ...(route.body && { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, components) } } } }),
    responses: Object.fromEntries(Object.entries(answers).map(([status, a]) => [status, answerOf(a, components)])),
  };
}

/** The OpenAPI 3.1 document of `routes` (every route of the API unless told). */
export function openApiDocument(routes: readonly ApiRoute[] = API_ROUTES, version = '0.1.0'): Json {
  const components = new Map<string, z.ZodType>();
  const paths: Record<string, Json> = {};
  for (const route of routes) paths[route.path] = { ...paths[route.path], [route.method]: operation(route, components) };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: DIALECT,
    info: {
      title: 'AQVEN',
      version,
      description:
        'Every refusal is JSON {error, code}. Before any route, the request checks answer in plain text: 421 (a Host not served), 403 (a state-changing request without a matching Origin; POST /api/runs with a Bearer token needs none), 413 (a Content-Length over AQVEN_MAX_BODY_BYTES).',
    },
    paths,
    components: {
      securitySchemes: {
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'aqven.session_token', description: "the dashboard's session (signed in at /login)" },
        bearerToken: { type: 'http', scheme: 'bearer', description: 'an API token from `aqven token create` (aqven_…); /api routes only' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'a token from `aqven token create NAME --scope metrics`: GET /metrics only' },
      },
      schemas: Object.fromEntries([...components].map(([id, s]) => [id, inline(s)])),
    },
  };
}
