// Deterministic JSON values from a JSON Schema, plus the three ways the simulator breaks them
// (schema-invalid, truncated, truncated-but-parses). DESIGN: "The provider simulator": "valid JSON generated from
// the requested schema". Covers the subset structured-output APIs accept; `pattern` is not solved.

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;

function isObj(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Resolves a local `$ref` ("#/$defs/X", "#/definitions/X", any JSON pointer into the root). */
function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObj(cur)) return undefined;
    cur = Object.hasOwn(cur, key) ? cur[key] : undefined; // "#/constructor" is not Object.prototype's
  }
  return isObj(cur) ? cur : undefined;
}

/** Flattens $ref, allOf and the first anyOf/oneOf branch into one schema object. */
export function normalize(root: Schema, schema: Schema, depth = 0): Schema {
  if (depth > MAX_DEPTH) return schema;
  let s = schema;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    const { $ref: _ref, ...rest } = s;
    s = target ? { ...normalize(root, target, depth + 1), ...rest } : rest;
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    let merged: Schema = rest;
    for (const part of allOf) if (isObj(part)) merged = mergeSchemas(merged, normalize(root, part, depth + 1));
    s = merged;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const { [key]: _b, ...rest } = s;
      // Prefer the first non-null branch: `anyOf: [{type: "null"}, X]` is how optional fields look.
      const first = branches.find((b) => isObj(b) && b.type !== 'null') ?? branches[0];
      s = isObj(first) ? mergeSchemas(rest, normalize(root, first, depth + 1)) : rest;
    }
  }
  return s;
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (isObj(a.properties) || isObj(b.properties)) {
    out.properties = { ...(isObj(a.properties) ? a.properties : {}), ...(isObj(b.properties) ? b.properties : {}) };
  }
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  }
  return out;
}

function typeOf(s: Schema): string | undefined {
  const t = s.type;
  if (typeof t === 'string') return t.toLowerCase(); // Gemini's responseSchema spells types "OBJECT"
  if (Array.isArray(t)) {
    const nonNull = t.find((x) => typeof x === 'string' && x.toLowerCase() !== 'null');
    return (nonNull ?? t[0])?.toLowerCase();
  }
  if (isObj(s.properties) || Array.isArray(s.required)) return 'object';
  if (s.items !== undefined || Array.isArray(s.prefixItems)) return 'array';
  if (typeof s.minimum === 'number' || typeof s.maximum === 'number') return 'number';
  if (typeof s.minLength === 'number' || typeof s.format === 'string') return 'string';
  return undefined;
}

const FORMAT_SAMPLES: Record<string, string> = {
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '12:00:00Z',
  duration: 'P1D',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

function sampleString(s: Schema, name: string, index: number): string {
  const fmt = typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined;
  let v = fmt ?? (name ? `sample ${name}` : 'sample text');
  if (index > 0 && !fmt) v = `${v} ${index + 1}`;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  if (v.length < min) v = v + 'x'.repeat(min - v.length);
  if (v.length > max) v = v.slice(0, max);
  return v;
}

function sampleNumber(s: Schema, integer: boolean, index: number): number {
  let lo = typeof s.minimum === 'number' ? s.minimum : -Infinity;
  let hi = typeof s.maximum === 'number' ? s.maximum : Infinity;
  // draft-06+ numeric exclusives; draft-04 boolean exclusives
  if (typeof s.exclusiveMinimum === 'number') lo = Math.max(lo, s.exclusiveMinimum + (integer ? 1 : 1e-9));
  else if (s.exclusiveMinimum === true && Number.isFinite(lo)) lo += integer ? 1 : 1e-9;
  if (typeof s.exclusiveMaximum === 'number') hi = Math.min(hi, s.exclusiveMaximum - (integer ? 1 : 1e-9));
  else if (s.exclusiveMaximum === true && Number.isFinite(hi)) hi -= integer ? 1 : 1e-9;
  let v: number;
  if (Number.isFinite(lo) && Number.isFinite(hi)) v = (lo + hi) / 2;
  else if (Number.isFinite(lo)) v = lo + (integer ? 1 : 0.5);
  else if (Number.isFinite(hi)) v = Math.min(hi, integer ? 1 : 0.5);
  else v = integer ? 1 : 0.5;
  v += index; // distinct values for uniqueItems arrays
  if (Number.isFinite(hi) && v > hi) v = hi;
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : undefined;
  if (integer) v = Number.isFinite(lo) ? Math.max(Math.ceil(lo), Math.floor(v)) : Math.floor(v);
  if (step) {
    let m = Math.ceil(v / step) * step;
    if (Number.isFinite(hi) && m > hi) m = Math.floor(hi / step) * step;
    v = Number(m.toFixed(10));
  }
  return v;
}

/** A deterministic value that validates against `schema` (for the supported keywords). */
export function sampleFromSchema(schema: unknown): unknown {
  if (!isObj(schema)) return schema === false ? null : 'sample text';
  return gen(schema, schema, '', 0, 0);
}

function gen(root: Schema, raw: Schema, name: string, index: number, depth: number): unknown {
  const s = normalize(root, raw);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[index % s.enum.length];
  if ('default' in s && s.default !== undefined && index === 0) return s.default;
  if (Array.isArray(s.examples) && s.examples.length > 0 && index === 0) return s.examples[0];
  const type = typeOf(s);
  if (depth > MAX_DEPTH) return type === 'object' ? {} : type === 'array' ? [] : null;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = isObj(s.properties) ? s.properties : {};
      for (const [key, sub] of Object.entries(props)) {
        out[key] = isObj(sub) ? gen(root, sub, key, 0, depth + 1) : sub === false ? undefined : 'sample text';
        if (out[key] === undefined) delete out[key];
      }
      // required keys without a property schema still have to be present
      for (const key of (s.required as string[] | undefined) ?? []) {
        if (!Object.hasOwn(out, key)) out[key] = isObj(s.additionalProperties) ? gen(root, s.additionalProperties, key, 0, depth + 1) : `sample ${key}`;
      }
      return out;
    }
    case 'array': {
      const tuple = Array.isArray(s.prefixItems) ? (s.prefixItems as unknown[]) : [];
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const max = typeof s.maxItems === 'number' ? s.maxItems : Infinity;
      const count = Math.min(Math.max(min, tuple.length, 1), max);
      const items = isObj(s.items) ? s.items : {};
      const out: unknown[] = [];
      for (let i = 0; i < count; i++) {
        const sub = i < tuple.length && isObj(tuple[i]) ? (tuple[i] as Schema) : items;
        out.push(gen(root, sub, name ? `${name} item` : 'item', i, depth + 1));
      }
      return out;
    }
    case 'string':
      return sampleString(s, name, index);
    case 'integer':
      return sampleNumber(s, true, index);
    case 'number':
      return sampleNumber(s, false, index);
    case 'boolean':
      return index % 2 === 0;
    case 'null':
      return null;
    default:
      return name ? `sample ${name}` : 'sample text';
  }
}

export type InvalidMode = 'missing_required' | 'wrong_enum' | 'not_json';

export const NOT_JSON_TEXT = 'Sure! Here is what you asked for: the ticket is about billing and I am fairly confident about that.';

/** A JSON value (serialized) that fails `schema` in the requested way, or prose for `not_json`. */
export function invalidForSchema(schema: unknown, mode: InvalidMode = 'missing_required'): string {
  if (mode === 'not_json' || !isObj(schema)) return NOT_JSON_TEXT;
  const value = sampleFromSchema(schema);
  if (mode === 'wrong_enum' && breakEnum(schema, schema, value, 0)) return JSON.stringify(value);
  if (dropRequired(schema, schema, value, 0)) return JSON.stringify(value);
  // Nothing required anywhere: a value of the wrong type still fails validation.
  const type = typeOf(normalize(schema, schema));
  if (type === 'object') return JSON.stringify(['not', 'an', 'object']);
  if (type === 'array' || type === 'string' || type === 'number' || type === 'integer' || type === 'boolean' || type === 'null') {
    return JSON.stringify({ unexpected: 'object' });
  }
  return NOT_JSON_TEXT; // schema accepts anything: only non-JSON can break it
}

const WRONG_ENUM_VALUE = 'not_an_allowed_value';

/** Walks value+schema together; replaces the first enum-constrained value. */
function breakEnum(root: Schema, raw: Schema, value: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  const s = normalize(root, raw);
  if (isObj(value) && isObj(s.properties)) {
    for (const [key, sub] of Object.entries(s.properties)) {
      if (!isObj(sub) || !Object.hasOwn(value, key)) continue;
      const subN = normalize(root, sub);
      if (Array.isArray(subN.enum) && subN.enum.length > 0) {
        value[key] = subN.enum.includes(WRONG_ENUM_VALUE) ? `${WRONG_ENUM_VALUE}_2` : WRONG_ENUM_VALUE;
        return true;
      }
      if (breakEnum(root, sub, value[key], depth + 1)) return true;
    }
  }
  if (Array.isArray(value) && value.length > 0 && isObj(s.items)) {
    const itemN = normalize(root, s.items);
    if (Array.isArray(itemN.enum) && itemN.enum.length > 0) {
      value[0] = WRONG_ENUM_VALUE;
      return true;
    }
    return breakEnum(root, s.items, value[0], depth + 1);
  }
  return false;
}

/** Walks value+schema together; deletes the first required property found (root first). */
function dropRequired(root: Schema, raw: Schema, value: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  const s = normalize(root, raw);
  if (isObj(value)) {
    const required = Array.isArray(s.required) ? (s.required as string[]) : [];
    const victim = required.find((k) => Object.hasOwn(value, k));
    if (victim !== undefined) {
      delete value[victim];
      return true;
    }
    if (isObj(s.properties)) {
      for (const [key, sub] of Object.entries(s.properties)) {
        if (isObj(sub) && Object.hasOwn(value, key) && dropRequired(root, sub, value[key], depth + 1)) return true;
      }
    }
  }
  if (Array.isArray(value) && value.length > 0 && isObj(s.items)) return dropRequired(root, s.items, value[0], depth + 1);
  return false;
}

/** Cuts serialized JSON (or any text) mid-way so that it no longer parses. */
export function cutText(text: string): string {
  for (let cut = Math.floor(text.length * 0.6); cut > 0; cut--) {
    const candidate = text.slice(0, cut);
    if (!parses(candidate)) return candidate;
  }
  return ''; // every prefix of a bare number parses: nothing arrived at all
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A shorter value that still serializes to complete JSON: later object fields / array items dropped. */
export function truncateValue(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length > 1) return value.slice(0, Math.ceil(value.length / 2));
    return value.length === 1 ? [truncateValue(value[0])] : value;
  }
  if (isObj(value)) {
    const keys = Object.keys(value);
    if (keys.length > 1) {
      const keep = keys.slice(0, Math.ceil(keys.length / 2));
      return Object.fromEntries(keep.map((k) => [k, value[k]]));
    }
    if (keys.length === 1) return { [keys[0]]: truncateValue(value[keys[0]]) };
    return value;
  }
  if (typeof value === 'string' && value.length > 1) return value.slice(0, Math.ceil(value.length / 2));
  return value;
}
