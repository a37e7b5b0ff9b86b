// The tasks `aqven limits` sends (DESIGN: CLI, `aqven limits`): for each dimension and level, a
// JSON Schema asking for exactly that figure and a prompt whose answer is checkable. The figures
// count as `aqven check` counts a node's schema (lib/project/schema-shape.ts), so a measured level
// and a node's schema compare:
// - depth N: N containers open at once, the root included — a required path of N - 1 nested
//   objects below the root, the innermost holding one required string;
// - list N: `items`, exactly N objects (minItems = maxItems = N), each with two required fields;
// - enum N: `choice`, one string out of N allowed values; the prompt names the right one by a
//   fragment only it contains, so a schema-valid answer can still be the wrong value.
// Every trial's values differ (seeded by the level and the trial number), so no two trials send
// the same request.
import { ENUM_TASK_PHRASE, LIMITS_PROBE_MARK, type LimitDimension } from '@/lib/shared/limits-types';
import { mulberry32 } from '@/lib/sim/chaos';

export interface LimitTask {
  dimension: LimitDimension;
  level: number;
  trial: number;
  prompt: string;
  schema: Record<string, unknown>;
  /** enum: the value the prompt asks for */
  expected?: string;
}

/** The levels each dimension's search starts at and may reach. */
export const LEVEL_RANGE: Record<LimitDimension, { start: number; max: number }> = {
  depth: { start: 4, max: 64 },
  list: { start: 8, max: 512 },
  enum: { start: 8, max: 1024 },
};

const LETTERS = 'abcdefghijkmnpqrstuvwxyz';
const DIGITS = '23456789';

/** `n` distinct tokens like "k7qm-vt3x", each with a 4-character fragment no other token contains. */
function tokens(n: number, rand: () => number): string[] {
  const pick = (alphabet: string) => alphabet[Math.floor(rand() * alphabet.length)]!;
  const word = () => `${pick(LETTERS)}${pick(DIGITS)}${pick(LETTERS)}${pick(LETTERS)}-${pick(LETTERS)}${pick(LETTERS)}${pick(DIGITS)}${pick(LETTERS)}`;
  const out: string[] = [];
  const seen = new Set<string>();
  while (out.length < n) {
    const w = word();
    if (!seen.has(w)) {
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}

const seedOf = (dimension: LimitDimension, level: number, trial: number) => ({ depth: 1, list: 2, enum: 3 })[dimension] * 1_000_003 + level * 7_919 + trial;

function depthTask(level: number, trial: number, rand: () => number): LimitTask {
  const word = tokens(1, rand)[0]!;
  const keys = Array.from({ length: level - 1 }, (_, i) => `level_${i + 2}`);
  let schema: Record<string, unknown> = { type: 'object', properties: { value: { type: 'string' } }, required: ['value'], additionalProperties: false };
  for (let i = keys.length - 1; i >= 0; i--) {
    schema = { type: 'object', properties: { [keys[i]!]: schema }, required: [keys[i]!], additionalProperties: false };
  }
  const path = [...keys, 'value'].join('.');
  return {
    dimension: 'depth',
    level,
    trial,
    schema,
    prompt: `${LIMITS_PROBE_MARK} trial ${trial + 1}. Write a JSON object that holds the text "${word}" at the path ${path}: every name on the path is an object key, each inside the one before it, and nothing else.`,
  };
}

function listTask(level: number, trial: number, rand: () => number): LimitTask {
  const topic = tokens(1, rand)[0]!;
  const schema = {
    type: 'object',
    properties: {
      items: {
        type: 'array',
        minItems: level,
        maxItems: level,
        items: {
          type: 'object',
          properties: { n: { type: 'integer' }, label: { type: 'string' } },
          required: ['n', 'label'],
          additionalProperties: false,
        },
      },
    },
    required: ['items'],
    additionalProperties: false,
  };
  return {
    dimension: 'list',
    level,
    trial,
    schema,
    prompt: `${LIMITS_PROBE_MARK} trial ${trial + 1}. List exactly ${level} items in "items", numbered 1 to ${level} in "n", each with a short "label" of your choice (start with "${topic}"). Exactly ${level}: no more, no fewer.`,
  };
}

function enumTask(level: number, trial: number, rand: () => number): LimitTask {
  const values = tokens(level, rand);
  const expected = values[Math.floor(rand() * values.length)]!;
  // the fragment only the expected value has: its second half is unique among the tokens drawn
  const fragment = uniqueFragment(expected, values);
  const schema = { type: 'object', properties: { choice: { type: 'string', enum: values } }, required: ['choice'], additionalProperties: false };
  return {
    dimension: 'enum',
    level,
    trial,
    schema,
    expected,
    prompt: `${LIMITS_PROBE_MARK} trial ${trial + 1}. ${ENUM_TASK_PHRASE} "${fragment}". Copy the whole value exactly as the schema lists it.`,
  };
}

/** The shortest piece of `value` (4 characters or more) that no other value contains. */
function uniqueFragment(value: string, all: string[]): string {
  for (let len = 4; len <= value.length; len++) {
    for (let at = 0; at + len <= value.length; at++) {
      const piece = value.slice(at, at + len);
      if (all.every((v) => v === value || !v.includes(piece))) return piece;
    }
  }
  return value;
}

/** The task of `trial` (0-based) at `level` of `dimension`: the same in every run. */
export function limitTask(dimension: LimitDimension, level: number, trial: number): LimitTask {
  const rand = mulberry32(seedOf(dimension, level, trial));
  if (dimension === 'depth') return depthTask(level, trial, rand);
  if (dimension === 'list') return listTask(level, trial, rand);
  return enumTask(level, trial, rand);
}

/**
 * max_tokens for a trial at `level`: the floor given (--max-tokens), or more when the level's answer
 * may need it — three times its size in tokens (about 4 characters each) and 256 spare — so a
 * truncation says the room was short, never that the probe gave too little for the level.
 */
export function maxTokensFor(dimension: LimitDimension, level: number, floor: number): number {
  // generous characters per level: `"level_12": {` per depth level, `{"n": 123, "label": "…"}, ` per item
  const chars = dimension === 'depth' ? 20 * level + 40 : dimension === 'list' ? 48 * level + 40 : 60;
  return Math.max(floor, Math.ceil((chars / 4) * 3) + 256);
}

/** enum: the answer picked the value asked for (the answer already passed the schema). */
export function answerCorrect(task: LimitTask, answer: unknown): boolean {
  if (task.expected === undefined) return true;
  return typeof answer === 'object' && answer !== null && (answer as { choice?: unknown }).choice === task.expected;
}
