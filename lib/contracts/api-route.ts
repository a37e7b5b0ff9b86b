// One HTTP route as data (DESIGN: The dashboard, "The API described"): its method and path, who may
// call it, its parameters, headers and body as zod schemas, and every answer it gives — status,
// body schema, headers, error codes. The route handler parses with these schemas and answers
// through `reply` (typed by them), and GET /api/openapi.json is generated from the same objects
// (lib/contracts/openapi.ts), so the document cannot drift from what the handlers do. A route is
// registered by listing its definition in API_ROUTES (lib/contracts/api-routes.ts).
import { z } from 'zod';
import type { Role } from '@/lib/shared/roles';

/** the code of a request without a valid session or token (401) */
export const AUTH_CODE = 'E_AUTH';
/** the caller's role may not do this (403) */
export const FORBIDDEN_CODE = 'E_FORBIDDEN';
/** who is asking cannot be read: the run database or the project is unavailable (503) */
export const UNAVAILABLE_CODE = 'E_UNAVAILABLE';

/** A header a route reads or sends: its schema (a string's) and what it means. */
export interface ApiHeader {
  description: string;
  schema?: z.ZodType;
  required?: boolean;
}

export interface ApiAnswer {
  description: string;
  /** the JSON body; absent: no body */
  body?: z.ZodType;
  /** a `text/event-stream` answer instead: each event's name and the schema of its (JSON) data */
  events?: Readonly<Record<string, z.ZodType>>;
  /** a text body instead (GET /metrics): its media type and what it holds */
  text?: { mediaType: string; description: string };
  /** the `code` values an error body may carry */
  codes?: readonly string[];
  headers?: Readonly<Record<string, ApiHeader>>;
}

export interface ApiRoute {
  /** a stable name for the operation (OpenAPI operationId) */
  id: string;
  method: 'get' | 'post';
  /** OpenAPI style: `/api/runs/{id}` */
  path: string;
  summary: string;
  /**
   * the least role that may call it (a session cookie or a Bearer token), `none`, or `metrics`: a
   * request from this machine or a token made with `aqven token create --scope metrics` (GET /metrics)
   */
  auth: Role | 'none' | 'metrics';
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: Readonly<Record<string, ApiHeader>>;
  body?: z.ZodType;
  answers: Readonly<Record<number, ApiAnswer>>;
}

/** A route's definition, its literal types kept (so `reply` knows each status's body). */
export function defineRoute<const R extends ApiRoute>(route: R): R {
  return route;
}

/** The body of every refusal: what went wrong, its code (one of `codes`), and the request field it is about. */
export function apiError(codes: readonly [string, ...string[]]) {
  return z.object({
    error: z.string().describe('one line saying what is wrong and how to fix it'),
    code: z.enum(codes),
    field: z.string().optional().describe('the request field it is about'),
  });
}

/** The answers of `routeCaller`'s refusals, shared by every route that needs a caller. */
export const CALLER_ANSWERS = {
  401: {
    description: 'no valid session cookie or API token',
    body: apiError([AUTH_CODE]),
    codes: [AUTH_CODE],
    headers: { 'WWW-Authenticate': { description: '`Bearer`' } },
  },
  403: { description: "the caller's role may not do this", body: apiError([FORBIDDEN_CODE]), codes: [FORBIDDEN_CODE] },
  503: {
    description: 'who is asking cannot be read (the run database or the project is unavailable)',
    body: apiError([UNAVAILABLE_CODE]),
    codes: [UNAVAILABLE_CODE],
    headers: { 'Retry-After': { description: 'seconds' } },
  },
} as const satisfies Record<number, ApiAnswer>;

type Answers<R extends ApiRoute> = R['answers'];
/** what a handler may send with `status`: the input type of that answer's body schema */
export type ReplyBody<R extends ApiRoute, S extends keyof Answers<R>> = Answers<R>[S] extends { body: infer B extends z.ZodType } ? z.input<B> : never;

/** The answer `status` of `route` with `body` (typed by the route's own schema) and `headers`. */
export function reply<R extends ApiRoute, S extends keyof Answers<R> & number>(route: R, status: S, body: ReplyBody<R, S>, headers?: Record<string, string>): Response {
  void route; // the route names the schema the body was typed against
  return Response.json(body, { status, headers });
}
