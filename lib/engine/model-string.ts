// A model string is `provider:model-id`, split at the FIRST colon (DESIGN: Words), so model ids
// may themselves contain colons (e.g. "openrouter:meta-llama/llama-3-8b:free"). The engine resolves
// a node's chain with it; `aqven check` reports the problems it finds. A model string holds
// printable characters only, and its model id a URL-safe set (MODEL_ID_CHARS): the one rule, for
// the schema (E_MODEL, the agent policy form through it) and the engine alike.

export interface ModelRef {
  provider: string;
  modelId: string;
}

const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export function parseModelString(model: string): ModelRef | null {
  const i = model.indexOf(':');
  if (i <= 0 || i === model.length - 1) return null;
  const provider = model.slice(0, i);
  const modelId = model.slice(i + 1);
  if (!PROVIDER_NAME.test(provider) || /\s/.test(model) || UNPRINTABLE.test(model) || modelIdProblem(modelId) !== null) return null;
  return { provider, modelId };
}

/**
 * The characters of a model id (DESIGN: Project files): those of real ids — OpenRouter's
 * "meta-llama/llama-3-8b:free", Bedrock's "anthropic.claude-3-5-sonnet-20240620-v1:0", Cloudflare's
 * "@cf/meta/llama-3-8b-instruct", Ollama's "qwen2.5:7b-instruct-q4_K_M" — and nothing a URL reads as
 * structure: an id goes into the request path of some wires (Gemini's models/{id}:generateContent).
 */
export const MODEL_ID_CHARS = 'letters A-Z a-z, digits and . _ - : / @ ~';
const MODEL_ID_CHAR = /[A-Za-z0-9._:/@~-]/;

/** Why a model id is refused (its first bad character, an empty, "." or ".." segment), or null. */
function modelIdProblem(id: string): string | null {
  for (const c of id) if (!MODEL_ID_CHAR.test(c)) return `contains the character ${JSON.stringify(c)}`;
  const segments = id.split('/');
  if (segments.some((s) => s === '')) return 'has an empty path segment ("/" at its start or end, or "//")';
  if (segments.some((s) => s === '.' || s === '..')) return 'has a "." or ".." path segment';
  return null;
}

/** Characters a model string may not hold: controls (NUL, U+0085, …), invisible format characters
 * (bidi overrides such as U+202E, zero-width spaces), separators, lone surrogates, unassigned code points. */
const UNPRINTABLE = /[\p{C}\p{Z}]/u;

/** The first unprintable character as U+XXXX, or null. */
function unprintable(model: string): string | null {
  const m = UNPRINTABLE.exec(model);
  return m ? `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` : null;
}

/** The model string as a message may show it: unprintable characters as \u{XXXX}. */
function shown(model: string): string {
  const clipped = model.length > 120 ? `${model.slice(0, 120)}…` : model;
  return clipped.replace(/[\p{C}\p{Z}]/gu, (c) => (c === ' ' ? c : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`));
}

export function modelStringProblem(model: string): string {
  const m = shown(model);
  if (!model.includes(':')) return `model "${m}" has no provider: write "provider:model-id"`;
  if (model.startsWith(':')) return `model "${m}" has an empty provider name`;
  if (model.endsWith(':') && model.indexOf(':') === model.length - 1) return `model "${m}" has an empty model id`;
  if (/\s/.test(model)) return `model "${m}" contains whitespace`;
  const bad = unprintable(model);
  if (bad) return `model "${m}" contains the unprintable character ${bad}: model strings are printable characters only`;
  const provider = model.slice(0, model.indexOf(':'));
  if (!PROVIDER_NAME.test(provider)) return `model "${m}" has an invalid provider name "${shown(provider)}"`;
  return `model "${m}": its model id ${modelIdProblem(model.slice(provider.length + 1)) ?? 'is not valid'}; a model id may contain only ${MODEL_ID_CHARS}, with no empty, "." or ".." segment`;
}

export const MODEL_HINT = 'write the model as "provider:model-id", e.g. "openrouter:openai/gpt-oss-20b"';
