// The conversation of a node (DESIGN: One model call, in order, step 1; Outcome policies, repair
// and budgets): the first request, and the two messages a repair adds — the model's own answer,
// then the validation errors.
import { SCHEMA_INSTRUCTION } from '@/lib/shared/schema-instruction';
import type { Message, NodeCall, ValidationIssue } from './types';

// a node's schema is one object of the loaded project: its paragraph is made once, not per call
const paragraphs = new WeakMap<Record<string, unknown>, string>();

export function schemaParagraph(schema: Record<string, unknown>): string {
  let text = paragraphs.get(schema);
  if (text === undefined) {
    text = `${SCHEMA_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``;
    paragraphs.set(schema, text);
  }
  return text;
}

/** strict: false asks for the schema in the prompt; strict: true puts it in the provider's field. */
export function wantsSchemaInPrompt(call: Pick<NodeCall, 'outputSchema' | 'policy'>): boolean {
  return call.outputSchema !== undefined && !call.policy.strict;
}

/** The node's original request: the system prompt, then the prompt (+ the schema paragraph). */
export function initialMessages(call: NodeCall): Message[] {
  const out: Message[] = [];
  if (call.system) out.push({ role: 'system', content: call.system });
  const prompt = wantsSchemaInPrompt(call) ? `${call.prompt}\n\n${schemaParagraph(call.outputSchema!)}` : call.prompt;
  out.push({ role: 'user', content: prompt });
  return out;
}

/** The user message of a repair: every validation error, then the schema again for strict: false. */
export function repairMessage(issues: ValidationIssue[], call: Pick<NodeCall, 'outputSchema' | 'policy'>): string {
  const lines = issues.map((i) => `- ${i.pointer === '' ? '(root)' : i.pointer}: ${i.message}`);
  let text = `Your answer does not match the JSON Schema. Fix these errors and answer again:\n${lines.join('\n')}`;
  if (wantsSchemaInPrompt(call)) text += `\n\n${schemaParagraph(call.outputSchema!)}`;
  return text;
}

/**
 * The message of an attempt that ended with outcome `error` (`provider_error`). An adapter's own
 * explanation already names the finish reason ('the provider ended the response with finish_reason
 * "error"'), so it follows the model as it is; the provider's text does not, so the finish reason
 * follows it. Neither is wrapped in "ended the response with an error", which they already say.
 */
export function providerErrorMessage(model: string, finishReason: string | null, text: string | null, fromProvider: boolean): string {
  const fr = finishReason ?? 'none';
  if (!text) return `${model} ended the response with an error (finish reason ${fr}) and sent no details`;
  return fromProvider ? `${model}: ${text} (finish reason ${fr})` : `${model}: ${text}`;
}
