// Structural limits the simulator plays (DESIGN: Structural limits, "In the simulator"): a
// model may be declared to hold up to a nesting depth, a list length and an enum size. A request
// whose JSON Schema asks for more — in the provider's schema field (strict: true) or in the prompt
// (strict: false), so in every dialect — gets an answer that breaks the schema with a probability
// rising from 1/2 one level past the limit to 1 a quarter of the limit further. The draw is a hash
// of the seed, the model and the request's text, so the same request always gets the same answer,
// whatever order concurrent requests arrive in.
//
// The figures are read the way `aqven check` reads a schema (lib/project/schema-shape.ts): depth
// counts the containers open at once, the root included; list is the largest minItems; enum the
// largest `enum`. They are taken from the deterministic sample value (every property filled), so
// they follow the walk that builds the answer.
import { ENUM_TASK_PHRASE, LIMITS_PROBE_MARK } from '../shared/limits-types';
import { normalize, sampleFromSchema } from './schema-json';
import type { SimLimits, SimModelLimits } from './script-schema';

type Schema = Record<string, unknown>;

function isObj(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One place in the sample answer: its parent container and key, its schema, its container depth. */
interface Spot {
  parent: Record<string, unknown> | unknown[] | null;
  key: string | number;
  schema: Schema;
  value: unknown;
  /** containers open at this value, itself included when it is one */
  depth: number;
}

/** Every spot of `value` walked with its schema (object properties, array items), root first. */
function spots(root: Schema, value: unknown): Spot[] {
  const out: Spot[] = [];
  const visit = (raw: Schema, v: unknown, parent: Spot['parent'], key: string | number, outer: number) => {
    if (out.length > 50_000) return;
    const s = normalize(root, raw);
    const depth = isObj(v) || Array.isArray(v) ? outer + 1 : outer;
    out.push({ parent, key, schema: s, value: v, depth });
    if (isObj(v) && isObj(s.properties)) {
      for (const [k, sub] of Object.entries(s.properties)) if (isObj(sub) && Object.hasOwn(v, k)) visit(sub, v[k], v, k, depth);
    } else if (Array.isArray(v)) {
      const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      v.forEach((item, i) => {
        const sub = i < tuple.length ? tuple[i] : s.items;
        if (isObj(sub)) visit(sub, item, v, i, depth);
      });
    }
  };
  visit(root, value, null, '', 0);
  return out;
}

export interface SchemaFigures {
  depth: number;
  list: number;
  enum: number;
}

/** The three figures a schema asks for, as the simulator's sample answer holds them. */
export function schemaFigures(schema: Schema): SchemaFigures {
  return figuresOf(spots(schema, sampleFromSchema(schema)));
}

function figuresOf(all: Spot[]): SchemaFigures {
  return {
    depth: Math.max(0, ...all.map((s) => s.depth)),
    list: Math.max(0, ...all.map((s) => (typeof s.schema.minItems === 'number' ? s.schema.minItems : 0))),
    enum: Math.max(0, ...all.map((s) => (Array.isArray(s.schema.enum) ? s.schema.enum.length : 0))),
  };
}

/** The chance that an answer to a schema asking for `asked` breaks, for a model that holds `limit`. */
export function breakChance(asked: number, limit: number | undefined): number {
  if (limit === undefined || asked <= limit) return 0;
  const step = Math.max(1, Math.ceil(limit / 4));
  return Math.min(1, 0.5 + (0.5 * (asked - limit - 1)) / step);
}

/** FNV-1a over the text, then one mulberry32 step: a uniform draw in [0, 1) fixed by the text. */
export function drawFor(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  let t = (h + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const NEAR_MISS = '-x';

/** Breaks `value` where `dimension` asks too much: a container flattened, a list cut short, a value outside the enum. */
function breakAt(all: Spot[], dimension: keyof SchemaFigures, limit: number): boolean {
  const set = (s: Spot, v: unknown) => {
    if (Array.isArray(s.parent)) s.parent[s.key as number] = v;
    else if (s.parent) s.parent[s.key as string] = v;
  };
  if (dimension === 'depth') {
    // the first container one level past the limit comes back as text (never the root: then nothing would parse as the answer)
    const s = all.find((x) => x.parent && x.depth === Math.max(2, limit + 1) && (isObj(x.value) || Array.isArray(x.value)));
    if (!s) return false;
    set(s, 'see above');
    return true;
  }
  if (dimension === 'list') {
    let best: Spot | undefined;
    for (const s of all) if (Array.isArray(s.value) && typeof s.schema.minItems === 'number' && s.schema.minItems > ((best?.schema.minItems as number | undefined) ?? 0)) best = s;
    if (!best) return false;
    const items = best.value as unknown[];
    // the model loses count a little short of the length asked
    items.length = Math.max(0, Math.min(items.length - 1, limit + Math.floor((items.length - limit) / 2)));
    return true;
  }
  let best: Spot | undefined;
  for (const s of all) if (Array.isArray(s.schema.enum) && s.schema.enum.length > ((best?.schema.enum as unknown[] | undefined)?.length ?? 0)) best = s;
  if (!best) return false;
  set(best, `${String(best.value)}${NEAR_MISS}`);
  return true;
}

/** The value a probe's enum task names by a fragment, when the prompt carries one and the enum holds it. */
function targetOf(prompt: string, values: unknown[]): unknown {
  const at = prompt.lastIndexOf(ENUM_TASK_PHRASE);
  if (at < 0) return undefined;
  const m = /^\s*"([^"]+)"/.exec(prompt.slice(at + ENUM_TASK_PHRASE.length));
  return m ? values.find((v) => typeof v === 'string' && v.includes(m[1]!)) : undefined;
}

export interface LimitedAnswer {
  /** the answer's JSON value */
  json: unknown;
  /** it breaks the schema */
  broken: boolean;
}

/** The declared limits of a model id as sent on the wire (own entry, then "*"). */
export function limitsOf(limits: SimLimits | undefined, model: string): SimModelLimits | undefined {
  if (!limits) return undefined;
  return (Object.hasOwn(limits, model) ? limits[model] : undefined) ?? (Object.hasOwn(limits, '*') ? limits['*'] : undefined);
}

/** A probe task of `aqven limits` (its prompt starts with the probe's mark). */
export function isProbeTask(prompt: string): boolean {
  return prompt.startsWith(LIMITS_PROBE_MARK);
}

/**
 * The answer of a model with declared limits to a request for `schema`; null when the request is no
 * probe task and asks for nothing past the limits (the simulator's usual answer then, chaos
 * included). `prompt` is the last user message: it names an enum probe's value; `seed` and the
 * request's text fix the draws.
 */
export function limitedAnswer(limits: SimModelLimits, schema: Schema, prompt: string, seed: number, model: string): LimitedAnswer | null {
  const value = sampleFromSchema(schema);
  const all = spots(schema, value);
  const figures = figuresOf(all);
  const past = (['depth', 'list', 'enum'] as const).some((d) => breakChance(figures[d], limits[d]) > 0);
  if (!past && !isProbeTask(prompt)) return null;
  const key = `${seed}\u0000${model}\u0000${JSON.stringify(schema)}\u0000${prompt}`;
  // the dimension most past its limit breaks first
  let worst: { dimension: keyof SchemaFigures; chance: number } | null = null;
  for (const dimension of ['depth', 'list', 'enum'] as const) {
    const chance = breakChance(figures[dimension], limits[dimension]);
    if (chance > 0 && (!worst || chance > worst.chance)) worst = { dimension, chance };
  }
  if (worst && drawFor(`${key}\u0000break`) < worst.chance && breakAt(all, worst.dimension, limits[worst.dimension]!)) {
    return { json: value, broken: true };
  }
  // a valid answer: the enum value the prompt names — or, past the enum limit, sometimes a neighbour of it
  for (const s of all) {
    if (!Array.isArray(s.schema.enum) || !s.parent) continue;
    const values = s.schema.enum;
    const target = targetOf(prompt, values);
    if (target === undefined) continue;
    const wrong = drawFor(`${key}\u0000pick`) < breakChance(values.length, limits.enum);
    const i = values.indexOf(target);
    const pick = wrong ? values[(i + 1) % values.length] : target;
    if (Array.isArray(s.parent)) s.parent[s.key as number] = pick;
    else s.parent[s.key as string] = pick;
  }
  return { json: value, broken: false };
}
