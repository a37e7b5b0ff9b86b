// An example run input built from a flow's input JSON Schema, to prefill the start-run form so a
// user edits a value of the right shape instead of writing JSON from nothing.
type Schema = Record<string, unknown>;

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function words(key: string): string {
  return key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
}

export function exampleFromSchema(schema: unknown, key = 'value', depth = 0): unknown {
  if (!isObj(schema) || depth > 8) return null;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const k of ['oneOf', 'anyOf'] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length) return exampleFromSchema(alts[0], key, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) {
    const parts = schema.allOf.map((s) => exampleFromSchema(s, key, depth + 1));
    return parts.every(isObj) ? Object.assign({}, ...parts) : parts[0];
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return objectExample(schema, depth);
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      return Array.from({ length: Math.max(1, Math.min(min, 3)) }, () => exampleFromSchema(schema.items, key, depth + 1));
    }
    case 'string':
      return stringExample(schema, key);
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : null;
      const max = typeof schema.maximum === 'number' ? schema.maximum : null;
      const v = min ?? (max != null ? Math.min(1, max) : 1);
      return type === 'integer' ? Math.ceil(v) : v;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return isObj(schema.properties) ? objectExample(schema, depth) : null;
  }
}

function objectExample(schema: Schema, depth: number): Record<string, unknown> {
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : Object.keys(props));
  const out: Record<string, unknown> = {};
  for (const [k, sub] of Object.entries(props)) {
    // optional fields too, when there are few: the example then shows everything that can be set
    if (required.has(k) || Object.keys(props).length <= 4) out[k] = exampleFromSchema(sub, k, depth + 1);
  }
  return out;
}

function stringExample(schema: Schema, key: string): string {
  switch (schema.format) {
    case 'email':
      return 'someone@example.com';
    case 'date':
      return '2026-01-15';
    case 'date-time':
      return '2026-01-15T09:30:00Z';
    case 'uri':
    case 'url':
      return 'https://example.com';
  }
  const base = `example ${words(key)}`;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  return base.padEnd(min, '.').slice(0, max);
}

export function exampleInputText(schema: unknown): string {
  const v = exampleFromSchema(schema, 'input');
  return JSON.stringify(v ?? {}, null, 2);
}
