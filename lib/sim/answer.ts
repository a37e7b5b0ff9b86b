// A step, applied to one request, becomes a dialect-neutral Answer (content + how it ends); the
// render-*.ts files turn an Answer into the exact wire bytes of each dialect.
import type { RequestInfo } from './request-info';
import { estimateTokens } from './request-info';
import { cutText, invalidForSchema, NOT_JSON_TEXT, sampleFromSchema, truncateValue } from './schema-json';
import type { Dialect, ScriptStep } from './types';

export type Finish = 'stop' | 'length' | 'refusal' | 'error';
export type RefusalVariant = 'refusal_field' | 'content_filter' | 'stop_reason' | 'safety' | 'prompt_blocked';
export type ErrorVariant = 'finish_error' | 'choice_error' | 'malformed_function_call' | 'other';
export type StreamErrorVariant = 'overload' | 'rate_limit' | 'malformed_call';

export interface Answer {
  /** assistant content; for the openai `refusal_field` variant, the refusal text */
  text: string;
  finish: Finish;
  refusal?: RefusalVariant;
  error?: ErrorVariant;
  errorMessage?: string;
  /** the mid-stream error of a `stream_error` step */
  streamError?: StreamErrorVariant;
  /** step overrides of the wire values; null = send no finish reason at all */
  finishReason?: string | null;
  nativeFinishReason?: string;
  usage: { input: number; output: number; thoughts: number; reported: boolean; billing: 'openai' | 'xai' };
}

export const LOREM =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor incididunt ut labore ' +
  'et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut ' +
  'aliquip ex ea commodo consequat.';
export const DEFAULT_REFUSAL = "I'm sorry, but I can't help with that request.";
export const DEFAULT_PROVIDER_ERROR = 'The upstream model returned an error while generating the response.';

// Benchmarks send the same schema thousands of times: remember the generated JSON per schema text.
const sampleCache = new Map<string, string>();
const SAMPLE_CACHE_MAX = 256;

function sampleJson(schema: Record<string, unknown>): string {
  const key = JSON.stringify(schema);
  let out = sampleCache.get(key);
  if (out === undefined) {
    out = JSON.stringify(sampleFromSchema(schema));
    if (sampleCache.size >= SAMPLE_CACHE_MAX) sampleCache.clear();
    sampleCache.set(key, out);
  }
  return out;
}

/** The content an `ok` step answers with for this request. */
export function okText(info: RequestInfo, step?: { text?: string; json?: unknown }): string {
  if (step?.json !== undefined) return JSON.stringify(step.json);
  if (step?.text !== undefined) return step.text;
  if (info.schema) return sampleJson(info.schema);
  if (info.jsonMode) return JSON.stringify({ result: 'sample text' });
  return LOREM;
}

function defaultRefusal(dialect: Dialect, asked: RefusalVariant | undefined): RefusalVariant {
  switch (dialect) {
    case 'openai':
    case 'openrouter':
      if (asked === 'refusal_field' || asked === 'content_filter') return asked;
      if (asked === 'stop_reason') return 'refusal_field';
      if (asked === 'safety' || asked === 'prompt_blocked') return 'content_filter';
      // OpenAI models refuse in message.refusal; OpenRouter normalises upstream safety stops
      return dialect === 'openai' ? 'refusal_field' : 'content_filter';
    case 'anthropic':
      return 'stop_reason';
    case 'gemini':
      return asked === 'prompt_blocked' ? 'prompt_blocked' : 'safety';
  }
}

function defaultError(dialect: Dialect, asked: ErrorVariant | undefined): ErrorVariant | undefined {
  switch (dialect) {
    case 'openai':
    case 'openrouter':
      return asked === 'finish_error' ? 'finish_error' : 'choice_error';
    case 'gemini':
      return asked === 'other' ? 'other' : 'malformed_function_call';
    case 'anthropic':
      return undefined; // one shape only: stop_reason pause_turn (see render-anthropic.ts)
  }
}

function build(info: RequestInfo, step: ScriptStep | undefined, text: string, finish: Finish, extra: Partial<Answer> = {}): Answer {
  const thoughts = step?.usage?.thoughts ?? 0;
  return {
    text,
    finish,
    finishReason: step?.finish_reason,
    nativeFinishReason: step?.native_finish_reason,
    ...extra,
    usage: {
      input: step?.usage?.input ?? info.inputTokens,
      output: step?.usage?.output ?? estimateTokens(text), // ceil(chars / 4); 0 for no text
      thoughts,
      reported: step?.usage?.reported ?? true,
      billing: step?.usage?.billing ?? 'openai',
    },
  };
}

/**
 * The Answer of a content-producing step. `drop`, `stall` and `stream_error` use the ok content
 * (or their own `text`) as the part the client receives before things go wrong.
 */
export function answerFor(info: RequestInfo, step: ScriptStep | undefined): Answer {
  if (!step) return build(info, undefined, okText(info), 'stop');
  switch (step.kind) {
    case 'ok':
      return build(info, step, okText(info, step), 'stop');
    case 'invalid': {
      const mode = step.mode ?? 'missing_required';
      return build(info, step, info.schema ? invalidForSchema(info.schema, mode) : NOT_JSON_TEXT, 'stop');
    }
    case 'truncated': {
      let text: string;
      if (step.text !== undefined) text = step.text;
      else if (info.schema) {
        const full = sampleFromSchema(info.schema);
        text = step.parses ? JSON.stringify(truncateValue(full)) : cutText(JSON.stringify(full));
      } else text = LOREM.slice(0, 117); // prose cut mid-word
      return build(info, step, text, 'length');
    }
    case 'refusal': {
      const refusal = defaultRefusal(info.dialect, step.variant);
      const text = refusal === 'prompt_blocked' ? '' : (step.text ?? DEFAULT_REFUSAL);
      return build(info, step, text, 'refusal', { refusal });
    }
    case 'provider_error':
      return build(info, step, step.text ?? '', 'error', {
        error: defaultError(info.dialect, step.variant),
        errorMessage: step.message ?? DEFAULT_PROVIDER_ERROR,
      });
    case 'stream_error':
      // Non-stream requests behave like provider_error (there is no stream to break).
      return build(info, step, step.text ?? LOREM.slice(0, 56), 'error', {
        error: defaultError(info.dialect, step.variant === 'malformed_call' ? 'malformed_function_call' : undefined),
        streamError: step.variant ?? 'overload',
        errorMessage: step.message, // each dialect has its own default wording
      });
    case 'drop':
    case 'stall':
      return build(info, step, okText(info, step), 'stop');
    case 'keepalive':
      // the content sent before the keep-alives: none unless `text` says so
      return build(info, step, step.text ?? '', 'stop');
    case 'status':
    case 'redirect':
      return build(info, step, '', 'error');
  }
}
