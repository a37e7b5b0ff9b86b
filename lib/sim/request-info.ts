// What the simulator needs from a parsed request body, per dialect: the model, stream flags, the
// requested JSON Schema (if any) and a token estimate of the prompt.
import { SCHEMA_INSTRUCTION } from '../shared/schema-instruction';
import type { Dialect } from './types';

export interface RequestInfo {
  dialect: Dialect;
  model: string;
  stream: boolean;
  /** openai: stream_options.include_usage (OpenRouter always sends usage) */
  includeUsage: boolean;
  /** gemini streamGenerateContent without alt=sse answers a JSON array instead of SSE */
  geminiArray: boolean;
  schema: Record<string, unknown> | undefined;
  /** openai response_format json_object: JSON wanted, no schema */
  jsonMode: boolean;
  inputTokens: number;
}

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Text of a message content: a string or an array of text parts/blocks. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) if (isObj(part) && typeof part.text === 'string') out += part.text;
  return out;
}

/** Reads the schema out of the strict:false instruction, if the text carries one. */
export function schemaFromPrompt(text: string): Record<string, unknown> | undefined {
  const at = text.lastIndexOf(SCHEMA_INSTRUCTION);
  if (at < 0) return undefined;
  const rest = text.slice(at + SCHEMA_INSTRUCTION.length);
  const open = rest.match(/```(?:json)?[ \t]*\r?\n/);
  if (!open || open.index === undefined) return undefined;
  const bodyStart = open.index + open[0].length;
  const close = rest.indexOf('```', bodyStart);
  if (close < 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(rest.slice(bodyStart, close));
    return isObj(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isObj(m) && m.role === 'user') return contentText(m.content);
  }
  return '';
}

function promptTokens(messages: unknown[], extra: string, field: 'content' | 'parts'): number {
  let chars = extra.length;
  for (const m of messages) if (isObj(m)) chars += contentText(m[field]).length;
  return Math.max(1, Math.ceil(chars / 4));
}

export type ParseResult = { ok: true; info: RequestInfo } | { ok: false; message: string; param?: string };

export function readOpenAI(dialect: 'openai' | 'openrouter', body: Record<string, unknown>): ParseResult {
  if (typeof body.model !== 'string' || body.model === '') {
    return { ok: false, message: 'you must provide a model parameter', param: 'model' };
  }
  if (!Array.isArray(body.messages)) {
    return { ok: false, message: "Missing required parameter: 'messages'.", param: 'messages' };
  }
  const rf = isObj(body.response_format) ? body.response_format : undefined;
  let schema = rf?.type === 'json_schema' && isObj(rf.json_schema) && isObj(rf.json_schema.schema) ? rf.json_schema.schema : undefined;
  schema ??= schemaFromPrompt(lastUserText(body.messages));
  return {
    ok: true,
    info: {
      dialect,
      model: body.model,
      stream: body.stream === true,
      includeUsage: dialect === 'openrouter' || (isObj(body.stream_options) && body.stream_options.include_usage === true),
      geminiArray: false,
      schema,
      jsonMode: rf?.type === 'json_object',
      inputTokens: promptTokens(body.messages, '', 'content'),
    },
  };
}

export function readAnthropic(body: Record<string, unknown>, version: string | undefined): ParseResult {
  if (!version) return { ok: false, message: 'anthropic-version: header is required' };
  if (typeof body.model !== 'string' || body.model === '') return { ok: false, message: 'model: Field required' };
  if (typeof body.max_tokens !== 'number') return { ok: false, message: 'max_tokens: Field required' };
  if (!Array.isArray(body.messages)) return { ok: false, message: 'messages: Field required' };
  const oc = isObj(body.output_config) ? body.output_config : undefined;
  // `output_format` is the older beta spelling of the same thing.
  const fmt = oc && isObj(oc.format) ? oc.format : isObj(body.output_format) ? body.output_format : undefined;
  let schema = fmt && fmt.type === 'json_schema' && isObj(fmt.schema) ? fmt.schema : undefined;
  schema ??= schemaFromPrompt(lastUserText(body.messages));
  return {
    ok: true,
    info: {
      dialect: 'anthropic',
      model: body.model,
      stream: body.stream === true,
      includeUsage: true,
      geminiArray: false,
      schema,
      jsonMode: false,
      inputTokens: promptTokens(body.messages, contentText(body.system), 'content'),
    },
  };
}

export function readGemini(model: string, stream: boolean, sse: boolean, body: Record<string, unknown>): ParseResult {
  if (!Array.isArray(body.contents)) {
    return { ok: false, message: '* GenerateContentRequest.contents: contents is not specified' };
  }
  const gc = isObj(body.generationConfig) ? body.generationConfig : undefined;
  let schema = gc && isObj(gc.responseJsonSchema) ? gc.responseJsonSchema : gc && isObj(gc.responseSchema) ? gc.responseSchema : undefined;
  let contentsText = '';
  for (let i = body.contents.length - 1; i >= 0; i--) {
    const c = body.contents[i];
    if (isObj(c) && (c.role === 'user' || c.role === undefined)) {
      contentsText = contentText(c.parts);
      break;
    }
  }
  schema ??= schemaFromPrompt(contentsText);
  const system = isObj(body.systemInstruction) ? contentText(body.systemInstruction.parts) : '';
  return {
    ok: true,
    info: {
      dialect: 'gemini',
      model,
      stream,
      includeUsage: true,
      geminiArray: stream && !sse,
      schema,
      jsonMode: gc?.responseMimeType === 'application/json',
      inputTokens: promptTokens(body.contents, system, 'parts'),
    },
  };
}
