// The typed client of the HTTP API (docs/client.md), shipped as `aqven/client`: a service calls
// AQVEN with it. Only `fetch` and eventsource-parser: no node: import, no server code, so it runs on
// Node 20 and in browsers. Its types are written here by hand after lib/contracts/api-schemas.ts and
// run-event-schemas.ts (those are zod schemas; importing them would bring zod and the server's
// modules along); test/api/client.test.ts checks its answers against a real server.
import { EventSourceParserStream } from 'eventsource-parser/stream';

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | (string & {});

/** GET /api/runs/:id (RunRecord in GET /api/openapi.json); fields not named here are kept */
export interface RunRecord {
  id: string;
  flow: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: { code: string; node: string | null; message: string; hint: string | null } | null;
  usage: { inputTokens: number; outputTokens: number; costUsd: number };
  startedAt: string;
  finishedAt: string | null;
  nodes: Array<{ id: string; agent: string; status: string; output: unknown; [k: string]: unknown }>;
  [k: string]: unknown;
}

/** runs.start's answer: the record when the run ended within the wait, else its id only */
export type StartAnswer = { ended: true; run: RunRecord; replayed: boolean } | { ended: false; id: string; replayed: boolean };

export interface RunList {
  items: Array<{ id: string; flow: string; status: RunStatus; startedAt: number; finishedAt: number | null; [k: string]: unknown }>;
  nextCursor: string | null;
}

export type RunListFilters = Partial<Record<'status' | 'flow' | 'agent' | 'model' | 'cause' | 'retried' | 'fell_back' | 'kind' | 'range' | 'from' | 'to' | 'cursor', string>> & {
  limit?: number;
};

export type RunEventName =
  'run.queued' | 'run.started' | 'node.started' | 'attempt.started' | 'attempt.try' | 'attempt.text' | 'attempt.ended' | 'node.ended' | 'pause' | 'run.ended';

/** one Server-Sent Event of GET /api/runs/:id/events (docs/WIRE.md, "A run's events") */
export interface RunEvent {
  id: string;
  event: RunEventName;
  data: Record<string, unknown>;
}

/** an answer of the API that is no success: its status and `{ error, code }` */
export class AqvenError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
    this.name = 'AqvenError';
  }
}

export interface ClientOptions {
  /** where AQVEN serves, e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** an API token (`aqven token add`), sent as Authorization: Bearer */
  token?: string;
  fetch?: typeof fetch;
  /** how many times a 429 or 503 is retried (default 3) */
  maxRetries?: number;
  /** waits `ms` between retries (default setTimeout); tests inject their own */
  sleep?: (ms: number) => Promise<void>;
}

const RETRIED = new Set([429, 503]);
/** a Retry-After of more than this is not waited for: the error goes to the caller */
const MAX_RETRY_AFTER_S = 120;

function newKey(): string {
  return globalThis.crypto.randomUUID();
}

export function createClient(o: ClientOptions) {
  const f = o.fetch ?? globalThis.fetch.bind(globalThis);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxRetries = o.maxRetries ?? 3;
  const base = o.baseUrl.replace(/\/+$/, '');

  /** one request, retried on 429 and 503 after their Retry-After (the same headers, so the same Idempotency-Key) */
  async function send(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    for (let attempt = 0; ; attempt++) {
      const res = await f(`${base}${path}`, { ...init, headers });
      if (res.ok || res.status === 204) return res;
      const retryAfterS = retryAfter(res.headers.get('retry-after'));
      if (RETRIED.has(res.status) && attempt < maxRetries && retryAfterS !== null && retryAfterS <= MAX_RETRY_AFTER_S) {
        await res.body?.cancel();
        await sleep(retryAfterS * 1000);
        continue;
      }
      throw await errorOf(res, retryAfterS);
    }
  }

  return {
    runs: {
      /** POST /api/runs: with `wait`, the record when the run ends within that many seconds */
      async start(flow: string, input: unknown, opts: { wait?: number; idempotencyKey?: string } = {}): Promise<StartAnswer> {
        const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': opts.idempotencyKey ?? newKey() };
        if (opts.wait !== undefined) headers.prefer = `wait=${opts.wait}`;
        const res = await send('/api/runs', { method: 'POST', headers, body: JSON.stringify({ flow, input }) });
        const replayed = res.headers.get('idempotent-replayed') === 'true';
        if (res.status === 200) return { ended: true, run: (await res.json()) as RunRecord, replayed };
        return { ended: false, id: ((await res.json()) as { id: string }).id, replayed };
      },
      /** GET /api/runs/:id; with `wait`, held until the run ends or that many seconds pass */
      async get(id: string, opts: { wait?: number } = {}): Promise<RunRecord> {
        const q = opts.wait === undefined ? '' : `?wait=${opts.wait}`;
        return (await (await send(`/api/runs/${encodeURIComponent(id)}${q}`)).json()) as RunRecord;
      },
      /** GET /api/runs: a page of the run list, newest first */
      async list(filters: RunListFilters = {}): Promise<RunList> {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(filters)) if (v !== undefined) q.set(k, String(v));
        const s = q.toString();
        return (await (await send(`/api/runs${s ? `?${s}` : ''}`)).json()) as RunList;
      },
      /** GET /api/runs/:id/events: the run's events until it ends; `lastEventId` resumes after that event */
      async *events(id: string, opts: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<RunEvent> {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
        const res = await send(`/api/runs/${encodeURIComponent(id)}/events`, { headers });
        if (res.status === 204 || !res.body) return;
        const stream = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
        const reader = stream.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            yield { id: value.id ?? '', event: (value.event ?? 'message') as RunEventName, data: JSON.parse(value.data) as Record<string, unknown> };
          }
        } finally {
          await reader.cancel().catch(() => {});
        }
      },
    },
  };
}

export type AqvenClient = ReturnType<typeof createClient>;

/** Retry-After in seconds: a number of seconds or an HTTP date; null when absent or unreadable */
function retryAfter(v: string | null): number | null {
  if (v === null || v.trim() === '') return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

async function errorOf(res: Response, retryAfterS: number | null): Promise<AqvenError> {
  const text = await res.text();
  try {
    const b = JSON.parse(text) as { error?: string; code?: string };
    return new AqvenError(res.status, b.code ?? null, b.error ?? `HTTP ${res.status}`, retryAfterS);
  } catch {
    return new AqvenError(res.status, null, text || `HTTP ${res.status}`, retryAfterS);
  }
}
