import { describe, expect, it } from 'vitest';
import { SCHEMA_INSTRUCTION } from '@/lib/shared/schema-instruction';
import { initialMessages, repairMessage } from './messages';
import type { NodeCall } from './types';
import { validateOutput } from './validate';

const schema = {
  type: 'object',
  properties: { queue: { enum: ['billing', 'tech'] }, confidence: { type: 'number', maximum: 1 } },
  required: ['queue', 'confidence'],
  additionalProperties: false,
};

describe('validateOutput', () => {
  it('accepts a matching value, also inside a single Markdown fence', () => {
    expect(validateOutput(schema, '{"queue":"tech","confidence":0.5}')).toEqual({ valid: true, value: { queue: 'tech', confidence: 0.5 } });
    expect(validateOutput(schema, '```json\n{"queue":"tech","confidence":1}\n```').valid).toBe(true);
  });

  it('lists every issue as JSON pointer + message', () => {
    const v = validateOutput(schema, '{"queue":"sales","confidence":2,"x":1}');
    expect(v.valid).toBe(false);
    if (v.valid) return;
    expect(v.issues).toEqual([
      { pointer: '', message: 'must NOT have additional properties: "x"' },
      { pointer: '/queue', message: 'must be equal to one of the allowed values: "billing", "tech"' },
      { pointer: '/confidence', message: 'must be <= 1' },
    ]);
  });

  it('text that is not JSON is one issue at the root', () => {
    const v = validateOutput(schema, 'Sure! Here you go');
    expect(v.valid).toBe(false);
    if (!v.valid) expect(v.issues[0]!.pointer).toBe('');
  });
});

describe('messages', () => {
  const call = (strict: boolean): NodeCall => ({
    nodeId: 'n',
    agent: 'a',
    agentFile: 'agents/a.yaml',
    policy: { chain: ['p:m'], retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict },
    system: 'You sort tickets.',
    prompt: 'Sort this.',
    outputSchema: schema,
  });

  it('strict: false appends the schema paragraph to the final user message', () => {
    const [sys, user] = initialMessages(call(false));
    expect(sys).toEqual({ role: 'system', content: 'You sort tickets.' });
    expect(user!.content).toBe(`Sort this.\n\n${SCHEMA_INSTRUCTION}\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``);
  });

  it('strict: true leaves the prompt alone (the schema goes to the provider field)', () => {
    expect(initialMessages(call(true))[1]!.content).toBe('Sort this.');
  });

  it('the repair message lists every error, then repeats the schema for strict: false', () => {
    const m = repairMessage(
      [
        { pointer: '', message: "must have required property 'queue'" },
        { pointer: '/confidence', message: 'must be <= 1' },
      ],
      call(false),
    );
    expect(m).toContain("- (root): must have required property 'queue'\n- /confidence: must be <= 1");
    expect(m).toContain(SCHEMA_INSTRUCTION);
    expect(repairMessage([], call(true))).not.toContain(SCHEMA_INSTRUCTION);
  });
});
