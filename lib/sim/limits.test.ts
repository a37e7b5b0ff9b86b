// The structural limits the simulator plays: within a model's declared limits its answers are the
// usual valid sample; past them they break the schema where it asks too much, more often the
// further past, the same way for the same request (seeded, whatever order requests arrive in); an
// enum probe gets the value it names. Over HTTP, in the three dialects, strict: true or false.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAjv } from '../shared/ajv';
import { LIMITS_PROBE_MARK } from '../shared/limits-types';
import { breakChance, drawFor, limitedAnswer, schemaFigures } from './limits';
import { startSimulator } from './server';
import type { SimServer } from './types';

const ajv = createAjv('validate');
const nested = (depth: number): Record<string, unknown> =>
  depth <= 1 ? { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] } : { type: 'object', properties: { k: nested(depth - 1) }, required: ['k'] };
const list = (n: number) => ({
  type: 'object',
  properties: { items: { type: 'array', minItems: n, maxItems: n, items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } },
  required: ['items'],
});
const LIMITS = { depth: 5, list: 40, enum: 30 };

describe('simulated structural limits', () => {
  it('reads the figures a schema asks for: containers open at once, the longest minItems, the largest enum', () => {
    expect(schemaFigures(nested(5))).toEqual({ depth: 5, list: 0, enum: 0 });
    expect(schemaFigures(list(12))).toEqual({ depth: 3, list: 12, enum: 0 });
    expect(schemaFigures({ type: 'object', properties: { a: { enum: ['x', 'y', 'z'] }, b: { type: 'array', items: { enum: [1, 2] } } } })).toEqual({ depth: 2, list: 0, enum: 3 });
  });

  it('breaks nothing within a limit; one level past it half the answers, then more, up to all', () => {
    expect(breakChance(40, 40)).toBe(0);
    expect(breakChance(41, 40)).toBe(0.5);
    expect(breakChance(46, 40)).toBeGreaterThan(0.5);
    expect(breakChance(51, 40)).toBe(1);
    expect(breakChance(1000, undefined)).toBe(0);
  });

  it('within the limits the answer is valid; past them it breaks where the schema asks too much', () => {
    const prompt = `${LIMITS_PROBE_MARK} trial 1.`;
    for (const schema of [nested(5), list(40)]) {
      const a = limitedAnswer(LIMITS, schema, prompt, 7, 'm')!;
      expect([a.broken, ajv.validate(schema, a.json)]).toEqual([false, true]);
    }
    let broken = 0;
    for (let trial = 0; trial < 40; trial++) {
      const a = limitedAnswer(LIMITS, list(45), `${LIMITS_PROBE_MARK} trial ${trial}.`, 7, 'm')!;
      expect(ajv.validate(list(45), a.json)).toBe(!a.broken);
      if (a.broken) {
        broken++;
        expect((a.json as { items: unknown[] }).items.length).toBeLessThan(45);
      }
    }
    // breakChance(45, 40) = 0.7: most, not all
    expect(broken).toBeGreaterThan(15);
    expect(broken).toBeLessThan(40);
    const deep = limitedAnswer(LIMITS, nested(9), prompt, 7, 'm')!;
    expect(deep.broken).toBe(true);
    expect(ajv.validate(nested(9), deep.json)).toBe(false);
  });

  it('a request that is no probe and asks for nothing past the limits is left to the usual answer', () => {
    expect(limitedAnswer(LIMITS, nested(3), 'Sort this ticket.', 7, 'm')).toBeNull();
    expect(limitedAnswer(LIMITS, nested(9), 'Sort this ticket.', 7, 'm')).not.toBeNull();
  });

  it('the same request gets the same answer; another seed other draws', () => {
    const p = `${LIMITS_PROBE_MARK} trial 3.`;
    expect(limitedAnswer(LIMITS, list(42), p, 7, 'm')).toEqual(limitedAnswer(LIMITS, list(42), p, 7, 'm'));
    expect(drawFor('a')).not.toBe(drawFor('b'));
  });

  it('an enum probe gets the value its prompt names by a fragment, within the limit', () => {
    const values = Array.from({ length: 20 }, (_, i) => `v${i}-abc${i}x`);
    const schema = { type: 'object', properties: { choice: { type: 'string', enum: values } }, required: ['choice'] };
    const a = limitedAnswer(LIMITS, schema, `${LIMITS_PROBE_MARK} trial 1. Set "choice" to the one allowed value that contains the fragment "abc13x".`, 7, 'm')!;
    expect(a.json).toEqual({ choice: 'v13-abc13x' });
  });
});

describe.each([
  ['openai', false],
  ['openrouter', true],
  ['anthropic', false],
  ['gemini', true],
] as const)('over HTTP, %s (strict: %s)', (dialect, strict) => {
  let sim: SimServer;
  beforeAll(async () => {
    sim = await startSimulator({ limits: { 'model-x': LIMITS }, chaos: { seed: 3, invalid: 1 } });
  });
  afterAll(() => sim.close());

  /** the answer's text to a probe request asking for `schema`, sent as the dialect sends it */
  async function ask(schema: Record<string, unknown>, trial: number): Promise<string> {
    const prompt =
      `${LIMITS_PROBE_MARK} trial ${trial}.` + (strict ? '' : `\n\nRespond with only a JSON value that matches this JSON Schema:\n\`\`\`json\n${JSON.stringify(schema)}\n\`\`\``);
    const base = sim.baseUrl(dialect);
    if (dialect === 'gemini') {
      const body = {
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        ...(strict && { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } }),
      };
      const r = (await (
        await fetch(`${base}/models/model-x:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      ).json()) as { candidates: { content: { parts: { text: string }[] } }[] };
      return r.candidates[0]!.content.parts[0]!.text;
    }
    if (dialect === 'anthropic') {
      const body = { model: 'model-x', max_tokens: 4096, messages: [{ role: 'user', content: prompt }] };
      const r = (await (
        await fetch(`${base}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) })
      ).json()) as { content: { text: string }[] };
      return r.content[0]!.text;
    }
    const body = {
      model: 'model-x',
      messages: [{ role: 'user', content: prompt }],
      ...(strict && { response_format: { type: 'json_schema', json_schema: { name: 'out', schema } } }),
    };
    const r = (await (await fetch(`${base}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
      choices: { message: { content: string } }[];
    };
    return r.choices[0]!.message.content;
  }

  it("plays the model's limits on probe tasks, in place of chaos's invalid answers", async () => {
    // chaos would break every answer (invalid: 1); a probe within the limits is answered validly
    expect(ajv.validate(list(40), JSON.parse(await ask(list(40), 1)))).toBe(true);
    const past = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(list(60), i)));
    expect(past.every((t) => !ajv.validate(list(60), JSON.parse(t)))).toBe(true);
  });
});
