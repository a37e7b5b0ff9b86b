import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { cutText, invalidForSchema, NOT_JSON_TEXT, sampleFromSchema, truncateValue } from './schema-json';
import { createAjv } from '@/lib/shared/ajv';
import { SCHEMA } from '@/test/helpers/sim-test-client';

const ajv = createAjv('validate');

const SCHEMAS: Record<string, object> = {
  triage: SCHEMA,
  'string bounds': { type: 'string', minLength: 40, maxLength: 45 },
  'exclusive numbers': { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
  'integer multipleOf': { type: 'integer', minimum: 7, multipleOf: 5 },
  'only maximum': { type: 'number', maximum: -3 },
  const: { const: 'fixed' },
  'nullable via type list': { type: ['null', 'string'], format: 'date' },
  'unique enum items': { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 3, uniqueItems: true },
  'unique strings': { type: 'array', items: { type: 'string' }, minItems: 4, uniqueItems: true },
  'maxItems 0': { type: 'array', items: { type: 'string' }, maxItems: 0 },
  'oneOf first branch': { oneOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { type: 'string' }] },
  'allOf merge': {
    allOf: [
      { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
      { properties: { b: { type: 'boolean' } }, required: ['b'] },
    ],
  },
  '$ref to $defs': {
    type: 'object',
    properties: { item: { $ref: '#/$defs/Item' }, list: { type: 'array', items: { $ref: '#/$defs/Item' } } },
    required: ['item', 'list'],
    $defs: { Item: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, n: { type: 'null' } }, required: ['id', 'n'] } },
  },
  'required without property schema': { type: 'object', required: ['x'] },
  'uri and email': { type: 'object', properties: { u: { type: 'string', format: 'uri' }, e: { type: 'string', format: 'email' } } },
};

describe('sampleFromSchema', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`validates: ${name}`, () => {
      const value = sampleFromSchema(schema);
      const ok = ajv.validate(schema, value);
      expect(ajv.errors ?? [], JSON.stringify(value)).toEqual([]);
      expect(ok).toBe(true);
    });
  }

  it('is deterministic', () => {
    expect(JSON.stringify(sampleFromSchema(SCHEMA))).toBe(JSON.stringify(sampleFromSchema(SCHEMA)));
  });

  it('handles Gemini responseSchema upper-case types and draft 2020 prefixItems', () => {
    const gemini = { type: 'OBJECT', properties: { n: { type: 'INTEGER' }, s: { type: 'STRING', enum: ['x'] } }, required: ['n', 's'] };
    expect(sampleFromSchema(gemini)).toEqual({ n: 1, s: 'x' });
    const ajv20 = new Ajv2020({ strict: false });
    addFormats(ajv20);
    const tuple = { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string', format: 'email' }], items: false };
    expect(ajv20.validate(tuple, sampleFromSchema(tuple))).toBe(true);
  });
});

describe('invalidForSchema', () => {
  it('missing_required drops a required field', () => {
    const value = JSON.parse(invalidForSchema(SCHEMA, 'missing_required'));
    expect(ajv.validate(SCHEMA, value)).toBe(false);
    expect(ajv.errors?.[0]?.keyword).toBe('required');
  });

  it('wrong_enum puts a value outside the enum', () => {
    const value = JSON.parse(invalidForSchema(SCHEMA, 'wrong_enum'));
    expect(ajv.validate(SCHEMA, value)).toBe(false);
    expect(ajv.errors?.map((e) => e.keyword)).toContain('enum');
    expect(value.queue).not.toMatch(/^(billing|tech|sales)$/);
  });

  it('wrong_enum without an enum falls back to missing_required', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    expect(JSON.parse(invalidForSchema(schema, 'wrong_enum'))).toEqual({});
  });

  it('finds nested required fields and otherwise breaks the type', () => {
    const nested = { type: 'object', properties: { inner: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] } } };
    expect(ajv.validate(nested, JSON.parse(invalidForSchema(nested)))).toBe(false);
    for (const schema of [{ type: 'string' }, { type: 'array', items: { type: 'number' } }, { type: 'object', properties: { a: { type: 'string' } } }]) {
      expect(ajv.validate(schema, JSON.parse(invalidForSchema(schema)))).toBe(false);
    }
  });

  it('not_json is prose', () => {
    expect(invalidForSchema(SCHEMA, 'not_json')).toBe(NOT_JSON_TEXT);
    expect(() => JSON.parse(NOT_JSON_TEXT)).toThrow();
  });
});

describe('truncation', () => {
  it('cutText never parses', () => {
    for (const text of [JSON.stringify(sampleFromSchema(SCHEMA)), '{"a":1}', '[1,2,3]', '"abc"', '12345']) {
      const cut = cutText(text);
      expect(cut.length).toBeLessThan(text.length);
      expect(() => JSON.parse(cut)).toThrow();
    }
  });

  it('truncateValue keeps complete JSON with later fields missing', () => {
    const full = sampleFromSchema(SCHEMA) as Record<string, unknown>;
    const cut = truncateValue(full) as Record<string, unknown>;
    expect(Object.keys(cut).length).toBeLessThan(Object.keys(full).length);
    expect(Object.keys(full).slice(0, Object.keys(cut).length)).toEqual(Object.keys(cut));
  });
});
