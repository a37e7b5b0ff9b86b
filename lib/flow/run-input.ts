// The check of a run input before anything of it is stored, for every way a run starts (API, form,
// CLI, queue): its size (lib/contracts/input-size.ts), then the flow's input schema.
import { inputSizeRefusal, maxInputBytes } from '@/lib/contracts/input-size';
import { compileSchema } from '@/lib/engine/validate';
import type { FlowDef } from '@/lib/project';
import { RunInputError } from './run-errors';

export interface InputCheckOptions {
  /**
   * the size bound in bytes (default maxInputBytes()); Infinity for an input stored already (a
   * claimed or taken-over run), which a bound lowered since must not strand
   */
  maxBytes?: number;
}

/**
 * Checks a run input: its JSON text is at most `maxBytes` (RunInputError naming the size and the
 * limit), then it matches the flow's input schema (RunInputError naming the field).
 */
export function validateRunInput(flow: FlowDef, input: unknown, opts: InputCheckOptions = {}): void {
  const tooLarge = inputSizeRefusal(input, opts.maxBytes ?? maxInputBytes());
  if (tooLarge) throw new RunInputError(tooLarge, 'input');
  if (!flow.inputSchema) return;
  // the engine's validators: one Ajv, each schema compiled once
  const validate = compileSchema(flow.inputSchema);
  if (validate(input)) return;
  const err = validate.errors![0]!;
  const missing = err.keyword === 'required' ? `/${(err.params as { missingProperty: string }).missingProperty}` : '';
  const field = `input${(err.instancePath + missing).replace(/\//g, '.')}`;
  const what = err.keyword === 'required' ? 'is required' : (err.message ?? 'is invalid');
  throw new RunInputError(`${field} ${what} (flow ${flow.name}, ${flow.file})`, field);
}
