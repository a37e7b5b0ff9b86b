// The "Clear pause" button of /providers: its one zod schema (the model string of the pause) and
// the state the server action answers with.
import { z } from 'zod';
import { MODEL_HINT, modelStringProblem, parseModelString } from '@/lib/engine/model-string';

export const clearPauseFormSchema = z.object({
  model: z
    .string({ error: 'which model? the form sent no model string' })
    .max(512, 'a model string is at most 512 characters')
    .refine((m) => parseModelString(m) !== null, { error: (i) => `${modelStringProblem(String(i.input))}; ${MODEL_HINT}` }),
});

export type ClearPauseState =
  | { status: 'idle' }
  /** `cleared` is false when the pause had already ended or been cleared */
  | { status: 'cleared'; model: string; cleared: boolean }
  | { status: 'error'; code: 'E_MODEL' | 'E_FORBIDDEN' | 'E_PROJECT'; message: string };
