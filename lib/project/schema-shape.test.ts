import { describe, expect, it } from 'vitest';
import { schemaShape } from './schema-shape';

const str = { type: 'string' };
/** An object whose one required property `k` is the next level: `n` objects deep. */
const nested = (n: number): Record<string, unknown> => (n === 0 ? str : { type: 'object', properties: { k: nested(n - 1) }, required: ['k'] });

describe('schemaShape: depth', () => {
  it('counts the objects and arrays open at once, the root included', () => {
    expect(schemaShape(str).depth.value).toBe(0);
    expect(schemaShape({ type: 'object', properties: { a: str } }).depth.value).toBe(1);
    expect(schemaShape(nested(6)).depth.value).toBe(6);
    // the showcase's draft: an object, its sections list, each section an object
    const draft = { type: 'object', properties: { title: str, sections: { type: 'array', minItems: 2, items: { type: 'object', properties: { heading: str, body: str } } } } };
    expect(schemaShape(draft).depth).toEqual({
      value: 3,
      levels: [[], ['properties', 'sections'], ['properties', 'sections', 'items']],
    });
  });

  it('takes the deepest property, optional or not, and points at each level of it', () => {
    const s = { type: 'object', properties: { shallow: { type: 'object', properties: { x: str } }, deep: nested(3) } };
    const { depth } = schemaShape(s);
    expect(depth.value).toBe(4);
    expect(depth.levels.at(-1)).toEqual(['properties', 'deep', 'properties', 'k', 'properties', 'k']);
  });

  it('a branch is the level of its schema: a nullable object is one level, not two', () => {
    const nullable = { type: 'object', properties: { a: { anyOf: [{ type: 'null' }, { type: 'object', properties: { b: str } }] } } };
    expect(schemaShape(nullable).depth.value).toBe(2);
    const merged = { type: 'object', allOf: [{ properties: { a: { type: 'object', properties: { b: str } } } }] };
    expect(schemaShape(merged).depth.value).toBe(2);
  });

  it('follows a local $ref, and not back into itself', () => {
    const viaRef = { type: 'object', properties: { a: { $ref: '#/$defs/inner' } }, $defs: { inner: nested(2) } };
    const shape = schemaShape(viaRef);
    expect(shape.depth.value).toBe(3);
    expect(shape.depth.levels[1]).toEqual(['$defs', 'inner']);
    const tree = { type: 'object', properties: { name: str, children: { type: 'array', items: { $ref: '#' } } } };
    expect(schemaShape(tree).depth.value).toBe(2);
  });

  it('stays bounded on a tangle of recursive references', () => {
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) defs[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/d${(i + 1) % 30}` }, b: { $ref: `#/$defs/d${(i + 1) % 30}` } } };
    const shape = schemaShape({ $ref: '#/$defs/d0', $defs: defs });
    expect(shape.depth.value).toBeGreaterThan(0);
    expect(shape.depth.value).toBeLessThanOrEqual(30);
  });
});

describe('schemaShape: lists and enums', () => {
  it('a list asks for its minItems; maxItems alone asks for nothing', () => {
    expect(schemaShape({ type: 'array', items: str, maxItems: 500 }).list).toBeNull();
    const s = { type: 'object', properties: { few: { type: 'array', minItems: 3, items: str }, many: { type: 'array', minItems: 60, maxItems: 80, items: str } } };
    expect(schemaShape(s).list).toEqual({ value: 60, path: ['properties', 'many', 'minItems'] });
  });

  it('the largest enum, also written as anyOf of consts', () => {
    const s = {
      type: 'object',
      properties: {
        queue: { enum: ['billing', 'tech', 'sales'] },
        country: { oneOf: Array.from({ length: 40 }, (_, i) => ({ const: `c${i}` })) },
        mixed: { anyOf: [{ const: 'a' }, str] },
      },
    };
    expect(schemaShape(s).enum).toEqual({ value: 40, path: ['properties', 'country', 'oneOf'] });
    expect(schemaShape({ type: 'object', properties: { a: str } }).enum).toBeNull();
  });

  it('finds lists and enums behind a $ref where they are written', () => {
    const s = { type: 'array', items: { $ref: '#/definitions/tag' }, definitions: { tag: { enum: ['a', 'b', 'c', 'd'] } } };
    expect(schemaShape(s).enum).toEqual({ value: 4, path: ['definitions', 'tag', 'enum'] });
  });
});
