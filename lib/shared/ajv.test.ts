import { describe, expect, it } from 'vitest';
import { createAjv } from './ajv';

describe('createAjv: check and validate modes differ only in schema strictness', () => {
  it('an unknown keyword or format fails to compile in check mode and is ignored in validate mode', () => {
    const typo = { type: 'object', requried: ['a'] };
    const format = { type: 'string', format: 'no-such-format' };
    expect(() => createAjv('check').compile(typo)).toThrow(/unknown keyword/);
    expect(() => createAjv('check').compile(format)).toThrow(/unknown format/);
    expect(createAjv('validate').compile(typo)({})).toBe(true);
    expect(createAjv('validate').compile(format)('anything')).toBe(true);
  });

  it('a schema that compiles in check mode gives the same verdict on every value in both modes', () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'number', minimum: 0 }, when: { type: 'string', format: 'date-time' }, tag: { type: ['string', 'null'] } },
      required: ['n'],
      additionalProperties: false,
    };
    const check = createAjv('check').compile(schema);
    const validate = createAjv('validate').compile(schema);
    const values = [
      { n: 1 },
      { n: -1 },
      { n: Number.NaN },
      { n: Infinity },
      { n: 1, when: 'yesterday' },
      { n: 1, when: '2026-01-01T00:00:00Z' },
      { n: 1, tag: null },
      { n: 1, x: 1 },
      {},
    ];
    for (const v of values) expect(validate(v)).toBe(check(v));
    expect(validate({ n: Infinity })).toBe(false);
  });
});
