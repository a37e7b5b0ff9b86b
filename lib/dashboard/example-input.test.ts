import { describe, expect, it } from 'vitest';
import { exampleFromSchema, exampleInputText } from './example-input';

describe('exampleFromSchema', () => {
  it('fills every required property with a value of its type', () => {
    const schema = {
      type: 'object',
      properties: { ticket: { type: 'string' }, priority: { enum: ['low', 'high'] }, count: { type: 'integer', minimum: 2 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['ticket', 'priority', 'count', 'tags'],
    };
    expect(exampleFromSchema(schema)).toEqual({ ticket: 'example ticket', priority: 'low', count: 2, tags: ['example tags'] });
  });

  it('prefers the schema author’s examples and defaults', () => {
    expect(exampleFromSchema({ type: 'string', examples: ['My invoice is wrong'] })).toBe('My invoice is wrong');
    expect(exampleFromSchema({ type: 'number', default: 0.5 })).toBe(0.5);
  });

  it('prints {} for a flow without an input schema', () => {
    expect(exampleInputText(undefined)).toBe('{}');
  });
});
