// The check of a run input before anything of it is stored (DESIGN: Storage, "A run's input is bounded
// before it is stored"): its size as JSON, then the flow's input schema.
import { describe, expect, it } from 'vitest';
import type { FlowDef } from '@/lib/project';
import { DEFAULT_MAX_INPUT_BYTES, maxInputBytes } from '@/lib/contracts/input-size';
import { RunInputError } from './run-errors';
import { validateRunInput } from './run-input';

const flow: FlowDef = {
  name: 'ask',
  file: 'flows/ask.yaml',
  inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  nodes: {},
};

const refusal = (f: () => void) => {
  try {
    f();
  } catch (err) {
    if (err instanceof RunInputError) return { message: err.message, field: err.field };
    throw err;
  }
  return null;
};

describe('validateRunInput', () => {
  it('bounds the input by its JSON text in UTF-8 bytes, before the schema: at the bound it passes, one byte over it is refused', () => {
    const input = { question: 'é'.repeat(10) }; // 2 bytes each in UTF-8
    const bytes = Buffer.byteLength(JSON.stringify(input));
    expect(bytes).toBe(35);
    expect(refusal(() => validateRunInput(flow, input, { maxBytes: 35 }))).toBeNull();
    expect(refusal(() => validateRunInput(flow, input, { maxBytes: 34 }))).toEqual({
      message: 'input is 35 bytes as JSON; a run input may be at most 34 bytes (34 bytes, AQVEN_MAX_INPUT_BYTES) — nothing was stored',
      field: 'input',
    });
    // too big and not matching the schema either: the size is what is said
    expect(refusal(() => validateRunInput(flow, { other: 'x'.repeat(100) }, { maxBytes: 50 }))?.field).toBe('input');
    expect(refusal(() => validateRunInput(flow, { other: 1 }, { maxBytes: 50 }))?.field).toBe('input.question');
    // an input stored already (a claimed or taken-over run) is not bounded again
    expect(refusal(() => validateRunInput(flow, input, { maxBytes: Infinity }))).toBeNull();
  });

  it('reads the bound from AQVEN_MAX_INPUT_BYTES, a positive whole number of bytes; anything else keeps 256 KiB', () => {
    expect(DEFAULT_MAX_INPUT_BYTES).toBe(262_144);
    expect(maxInputBytes({})).toBe(DEFAULT_MAX_INPUT_BYTES);
    expect(maxInputBytes({ AQVEN_MAX_INPUT_BYTES: ' 1048576 ' })).toBe(1_048_576);
    for (const bad of ['', '0', '-5', '1mb', '1e6', '2.5', '99999999999999999999']) expect(maxInputBytes({ AQVEN_MAX_INPUT_BYTES: bad })).toBe(DEFAULT_MAX_INPUT_BYTES);
  });
});
