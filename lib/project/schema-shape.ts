// The shape a node's output JSON Schema asks a model for, in the three figures `aqven limits`
// measures (DESIGN: CLI, W_SCHEMA_LIMIT): how deep the answer nests, how long a list it must
// hold, and how many values one enum offers. Each figure comes with where it is written inside
// the schema, so a warning can point at it. Pure; bounded however the schema is written.
//
// The rules (the same counting as the probe's tasks, so a schema and a measured level compare):
// - depth: the most containers (objects and arrays) open at once in an answer the schema allows,
//   the root included: {type: object, properties: {a: {type: string}}} is 1, an array of such
//   objects is 2. Every property counts, required or not (a model fills optional fields too);
//   anyOf/oneOf/allOf branches and then/else sit at the level of their schema; a local $ref is
//   followed, and a $ref back into a schema it is already inside is not (a recursive schema
//   allows any depth but asks for none).
// - list: the largest minItems — the count an answer must at least hold. maxItems only caps a
//   list and asks for nothing, and a list without minItems asks for no particular length.
// - enum: the largest `enum`, or anyOf/oneOf whose every branch is a `const` (the same choice
//   written another way).
import type { PathSegment } from './diagnostics';

type Schema = Record<string, unknown>;

export interface ShapeFigure {
  value: number;
  /** where it is written, inside the schema (e.g. ["properties", "tags", "minItems"]) */
  path: PathSegment[];
}

export interface SchemaShape {
  depth: {
    value: number;
    /** the deepest chain: levels[i] is where the container at level i + 1 is written */
    levels: PathSegment[][];
  };
  /** null: no list of the schema has a minItems above 0 */
  list: ShapeFigure | null;
  /** null: the schema has no enum */
  enum: ShapeFigure | null;
}

interface Measured {
  /** where the container at this level is written (this schema, or a branch of it); null: no container */
  own: PathSegment[] | null;
  /** the deepest chain below this level */
  inner: PathSegment[][];
  list: ShapeFigure | null;
  enum: ShapeFigure | null;
  /** cut short by a recursive $ref: depends on where the walk came from, so not remembered */
  cut: boolean;
}

/** Recursion stops here whatever the schema: YAML nests at most 64 deep (LIMITS.depth), $refs add a few levels. */
const MAX_WALK = 256;
/** Schemas visited in all; a tangle of recursive $refs is not walked forever. */
const MAX_VISITS = 5_000;

const NONE: Measured = { own: null, inner: [], list: null, enum: null, cut: false };
const CUT: Measured = { ...NONE, cut: true };

/** The containers of a measured schema, outermost first. */
const chainOf = (m: Measured): PathSegment[][] => (m.own ? [m.own, ...m.inner] : m.inner);

function isObj(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function types(s: Schema): string[] {
  const t = s.type;
  return (typeof t === 'string' ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : []).map((x) => x.toLowerCase());
}

function isContainer(s: Schema): boolean {
  const t = types(s);
  if (t.includes('object') || t.includes('array')) return true;
  if (t.length > 0) return false;
  return isObj(s.properties) || isObj(s.patternProperties) || isObj(s.additionalProperties) || s.items !== undefined || Array.isArray(s.prefixItems);
}

const larger = (a: ShapeFigure | null, b: ShapeFigure | null) => (b && (!a || b.value > a.value) ? b : a);

/** A local "#/…" reference inside `root`, with the path where the target is written. */
function resolveRef(root: Schema, ref: string): { target: Schema; path: PathSegment[] } | null {
  if (!ref.startsWith('#')) return null;
  let cur: unknown = root;
  const path: PathSegment[] = [];
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur) && /^\d+$/.test(key)) {
      cur = cur[Number(key)];
      path.push(Number(key));
    } else if (isObj(cur) && Object.hasOwn(cur, key)) {
      cur = cur[key];
      path.push(key);
    } else return null;
  }
  return isObj(cur) ? { target: cur, path } : null;
}

/** The three figures of `schema` (a node's output JSON Schema). */
export function schemaShape(schema: unknown): SchemaShape {
  if (!isObj(schema)) return { depth: { value: 0, levels: [] }, list: null, enum: null };
  const root = schema;
  // a schema reached twice (a $ref used on many nodes) is measured once: its figures do not
  // depend on where it is used, since their paths are where it is written
  const memo = new Map<Schema, Measured>();
  const inside = new Set<Schema>();
  let visits = 0;

  const walk = (s: Schema, path: PathSegment[], walked: number): Measured => {
    const known = memo.get(s);
    if (known) return known;
    if (inside.has(s) || walked > MAX_WALK || ++visits > MAX_VISITS) return CUT;
    inside.add(s);
    let cut = false;
    const sub = (v: unknown, p: PathSegment[]): Measured => {
      if (!isObj(v)) return NONE;
      const m = walk(v, p, walked + 1);
      cut ||= m.cut;
      return m;
    };

    let list: ShapeFigure | null = typeof s.minItems === 'number' && s.minItems > 0 ? { value: s.minItems, path: [...path, 'minItems'] } : null;
    let choices: ShapeFigure | null = Array.isArray(s.enum) ? { value: s.enum.length, path: [...path, 'enum'] } : null;
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = s[key];
      if (Array.isArray(branches) && branches.length > 0 && branches.every((b) => isObj(b) && 'const' in b))
        choices = larger(choices, { value: branches.length, path: [...path, key] });
    }

    // what sits one level down (inside this container) and what sits at this level (branches)
    const below: Measured[] = [];
    const beside: Measured[] = [];
    const each = (v: unknown, p: PathSegment[], into: Measured[]) => {
      if (isObj(v)) into.push(sub(v, p));
      else if (Array.isArray(v)) v.forEach((x, i) => into.push(sub(x, [...p, i])));
    };
    for (const key of ['properties', 'patternProperties'] as const) {
      const props = s[key];
      if (isObj(props)) for (const [name, v] of Object.entries(props)) each(v, [...path, key, name], below);
    }
    for (const key of ['additionalProperties', 'items', 'prefixItems', 'additionalItems', 'contains'] as const) each(s[key], [...path, key], below);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) each(s[key], [...path, key], beside);
    for (const key of ['then', 'else'] as const) each(s[key], [...path, key], beside);
    if (typeof s.$ref === 'string') {
      const found = resolveRef(root, s.$ref);
      if (found) beside.push(sub(found.target, found.path));
    }

    // a branch describes the same value as its schema: its container is this level's, and what
    // lies below it lies below this level
    let own: PathSegment[] | null = isContainer(s) ? path : null;
    let inner: PathSegment[][] = [];
    for (const m of below) {
      list = larger(list, m.list);
      choices = larger(choices, m.enum);
      const chain = chainOf(m);
      if (chain.length > inner.length) inner = chain;
    }
    for (const m of beside) {
      list = larger(list, m.list);
      choices = larger(choices, m.enum);
      own ??= m.own;
      if (m.inner.length > inner.length) inner = m.inner;
    }
    inside.delete(s);
    const out: Measured = { own, inner, list, enum: choices, cut };
    if (!cut) memo.set(s, out);
    return out;
  };

  const m = walk(root, [], 0);
  const levels = chainOf(m);
  return { depth: { value: levels.length, levels }, list: m.list, enum: m.enum };
}
