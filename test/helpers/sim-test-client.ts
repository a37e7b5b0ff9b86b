// Test-only helpers: talk to a started simulator with Node's fetch and parse SSE with
// eventsource-parser. Used by lib/sim/*.test.ts; validate answers with lib/shared/ajv.ts.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { SCHEMA_INSTRUCTION } from '@/lib/shared/schema-instruction';
import type { Dialect, SimServer } from '@/lib/sim/types';

export const SCHEMA = {
  type: 'object',
  properties: {
    queue: { enum: ['billing', 'tech', 'sales'] },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    contact: { type: 'string', format: 'email' },
    tags: { type: 'array', items: { type: 'string', minLength: 3 }, minItems: 2 },
    when: { type: 'string', format: 'date-time' },
    priority: { type: 'integer', minimum: 1, maximum: 5 },
    meta: {
      type: 'object',
      properties: { source: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] }, escalate: { type: 'boolean' } },
      required: ['source', 'escalate'],
    },
  },
  required: ['queue', 'confidence', 'tags', 'meta'],
} as const;

export type SchemaCarrier = 'structured' | 'prompt' | 'none';

function promptWith(schema: object | undefined, carrier: SchemaCarrier): string {
  const base = 'Sort this ticket into a queue: my invoice is wrong';
  if (carrier !== 'prompt' || !schema) return base;
  return `${base}\n\n${SCHEMA_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``;
}

/** A realistic request of the dialect; `carrier` says where the schema travels. */
export function requestFor(
  dialect: Dialect,
  opts: { model?: string; stream?: boolean; schema?: object; carrier?: SchemaCarrier; includeUsage?: boolean } = {},
): { path: string; body: Record<string, unknown>; headers: Record<string, string> } {
  const carrier = opts.carrier ?? (opts.schema ? 'structured' : 'none');
  const text = promptWith(opts.schema, carrier);
  const structured = carrier === 'structured' ? opts.schema : undefined;
  switch (dialect) {
    case 'openai':
    case 'openrouter': {
      const body: Record<string, unknown> = {
        model: opts.model ?? (dialect === 'openai' ? 'gpt-4o-mini' : 'openai/gpt-oss-20b'),
        messages: [
          { role: 'system', content: 'You sort support tickets.' },
          { role: 'user', content: text },
        ],
        max_tokens: 512,
      };
      if (opts.stream) {
        body.stream = true;
        if (opts.includeUsage !== false) body.stream_options = { include_usage: true };
      }
      if (structured) body.response_format = { type: 'json_schema', json_schema: { name: 'out', schema: structured, strict: true } };
      return { path: '/chat/completions', body, headers: { authorization: 'Bearer sk-secret-openai' } };
    }
    case 'anthropic': {
      const body: Record<string, unknown> = {
        model: opts.model ?? 'claude-sonnet-4-5',
        max_tokens: 512,
        system: 'You sort support tickets.',
        messages: [{ role: 'user', content: text }],
      };
      if (opts.stream) body.stream = true;
      if (structured) body.output_config = { format: { type: 'json_schema', schema: structured } };
      return { path: '/messages', body, headers: { 'x-api-key': 'sk-ant-secret', 'anthropic-version': '2023-06-01' } };
    }
    case 'gemini': {
      const model = opts.model ?? 'gemini-2.5-flash';
      const body: Record<string, unknown> = {
        systemInstruction: { parts: [{ text: 'You sort support tickets.' }] },
        contents: [{ role: 'user', parts: [{ text }] }],
        generationConfig: { maxOutputTokens: 512 },
      };
      if (structured) body.generationConfig = { maxOutputTokens: 512, responseMimeType: 'application/json', responseJsonSchema: structured };
      const path = opts.stream ? `/models/${model}:streamGenerateContent?alt=sse` : `/models/${model}:generateContent`;
      return { path, body, headers: { 'x-goog-api-key': 'AIza-secret' } };
    }
  }
}

export async function call(sim: SimServer, dialect: Dialect, opts: Parameters<typeof requestFor>[1] = {}): Promise<Response> {
  const { path, body, headers } = requestFor(dialect, opts);
  return fetch(sim.baseUrl(dialect) + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Every SSE event of a response body (plus the comments seen), using eventsource-parser. */
export async function readSse(res: Response): Promise<{ events: SseEvent[]; comments: string[] }> {
  const comments: string[] = [];
  const reader = res
    .body!.pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onComment: (c) => comments.push(c) }))
    .getReader();
  const events: SseEvent[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    events.push({ event: value.event, data: value.data });
  }
  return { events, comments };
}

/** A wire body as tests read it: deep optional chains over the shapes of three dialects. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- typing every dialect's bodies would restate docs/WIRE.md
export type WireJson = Record<string, any>;

/** Parsed JSON of every data event except `[DONE]`. */
export function jsonData(events: SseEvent[]): WireJson[] {
  return events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
}
