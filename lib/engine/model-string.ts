// A model string is `provider:model-id`, split at the FIRST colon (DESIGN: Words), so model ids
// may themselves contain colons (e.g. "openrouter:meta-llama/llama-3-8b:free"). The engine resolves
// a node's chain with it; `aqven check` reports the problems it finds.

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
  if (!PROVIDER_NAME.test(provider) || /\s/.test(model)) return null;
  return { provider, modelId };
}

export function modelStringProblem(model: string): string {
  if (!model.includes(':')) return `model "${model}" has no provider: write "provider:model-id"`;
  if (model.startsWith(':')) return `model "${model}" has an empty provider name`;
  if (model.endsWith(':') && model.indexOf(':') === model.length - 1) return `model "${model}" has an empty model id`;
  if (/\s/.test(model)) return `model "${model}" contains whitespace`;
  return `model "${model}" has an invalid provider name "${model.slice(0, model.indexOf(':'))}"`;
}

export const MODEL_HINT = 'write the model as "provider:model-id", e.g. "openrouter:openai/gpt-oss-20b"';
