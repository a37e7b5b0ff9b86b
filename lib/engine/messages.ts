// The conversation of a node (DESIGN: One model call, in order, step 1; Outcome policies, repair
// and budgets): the first request, and the two messages a repair adds — the model's own answer,
// then the validation errors.
import { SCHEMA_INSTRUCTION } from '@/lib/shared/schema-instruction';
import type { Message, NodeCall, ValidationIssue } from './types';

export function schemaParagraph(schema: Record<string, unknown>): string {
  return `${SCHEMA_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``;
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
