// The probe's tasks ask for exactly their level, counted the way `aqven check` counts a node's
// schema (lib/project/schema-shape.ts) and the simulator counts a request's: a measured level and a
// schema's figure compare. Each trial's task differs; the same trial's is the same in every run.
import { describe, expect, it } from 'vitest';
import { schemaShape } from '@/lib/project/schema-shape';
import { schemaFigures } from '@/lib/sim/limits';
import { createAjv } from '@/lib/shared/ajv';
import { answerCorrect, limitTask, maxTokensFor } from './tasks';

describe('limits tasks', () => {
  it.each([1, 2, 5, 13])('depth %i: that many containers, the root included', (level) => {
    const t = limitTask('depth', level, 0);
    expect(schemaShape(t.schema).depth.value).toBe(level);
    if (level <= 12) expect(schemaFigures(t.schema).depth).toBe(level);
  });

  it.each([1, 40, 41, 512])('list %i: exactly that many items', (level) => {
    const t = limitTask('list', level, 2);
    expect(schemaShape(t.schema).list?.value).toBe(level);
    expect(schemaFigures(t.schema).list).toBe(level);
    expect(t.prompt).toContain(`exactly ${level} items`);
  });

  it.each([2, 30, 1024])('enum %i: one choice out of that many, named by a fragment only it has', (level) => {
    const t = limitTask('enum', level, 1);
    const values = (t.schema.properties as { choice: { enum: string[] } }).choice.enum;
    expect(schemaShape(t.schema).enum?.value).toBe(level);
    expect(new Set(values).size).toBe(level);
    const fragment = /fragment "([^"]+)"/.exec(t.prompt)![1]!;
    expect(values.filter((v) => v.includes(fragment))).toEqual([t.expected]);
    expect(answerCorrect(t, { choice: t.expected })).toBe(true);
    expect(answerCorrect(t, { choice: values.find((v) => v !== t.expected) })).toBe(false);
  });

  it('gives every level room for its answer: --max-tokens at least, more for a long list', () => {
    expect(maxTokensFor('enum', 1024, 8192)).toBe(8192);
    expect(maxTokensFor('list', 40, 8192)).toBe(8192);
    const big = limitTask('list', 512, 0);
    const answer = JSON.stringify({ items: Array.from({ length: 512 }, (_, i) => ({ n: i + 1, label: `${'x'.repeat(12)}` })) });
    expect(maxTokensFor('list', 512, 1024)).toBeGreaterThan((answer.length / 4) * 2);
    expect(big.prompt).toContain('exactly 512 items');
  });

  it('trials differ, and a trial is the same in every run', () => {
    expect(limitTask('enum', 30, 0).prompt).not.toBe(limitTask('enum', 30, 1).prompt);
    expect(limitTask('depth', 6, 3)).toEqual(limitTask('depth', 6, 3));
  });

  it('the schemas are valid JSON Schemas that accept a right answer and refuse a short one', () => {
    const ajv = createAjv('validate');
    const list = ajv.compile(limitTask('list', 3, 0).schema);
    expect(list({ items: [1, 2, 3].map((n) => ({ n, label: 'x' })) })).toBe(true);
    expect(list({ items: [1, 2].map((n) => ({ n, label: 'x' })) })).toBe(false);
    const depth = ajv.compile(limitTask('depth', 3, 0).schema);
    expect(depth({ level_2: { level_3: { value: 'w' } } })).toBe(true);
    expect(depth({ level_2: { level_3: 'w' } })).toBe(false);
  });
});
