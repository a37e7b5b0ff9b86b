// The agent policy form of /agents/NAME (DESIGN: The dashboard): the values it posts, how they
// become the input of the save-a-policy contract (lib/contracts/save-policy.ts: lib/project's
// `agentPolicyFormSchema`, the same rules as `aqven check`, including E_OUTCOME_FALLBACK), and the
// errors it shows per field, placed by the field path of each issue or diagnostic. Shared by the
// browser and the action.
import type { z } from 'zod';
import type { OutcomePolicy } from '@/lib/engine/types';
import type { Diagnostic } from '@/lib/project/diagnostics';
import { savePolicySchema as agentPolicyFormSchema, type SavePolicy as AgentPolicyForm } from '@/lib/contracts/save-policy';

export { agentPolicyFormSchema, type AgentPolicyForm };

export const OUTCOME_POLICIES: OutcomePolicy[] = ['fail', 'retry', 'fallback'];

/** Field keys of the form, as dotted paths of the agent file. */
export type PolicyField = 'model' | 'fallback_models' | 'output.retries' | 'output.on_error' | 'output.on_refusal' | 'output.on_truncated' | 'output.strict' | 'form';

export interface FieldError {
  message: string;
  /** a check code (E_OUTCOME_FALLBACK, E_MODEL, E_STRICT, E_FIELD, …) */
  code: string;
  hint?: string;
  /** index of the fallback model it is about */
  index?: number;
}

export type PolicyErrors = Partial<Record<PolicyField, FieldError[]>>;

export interface SaveAgentPolicyState {
  ok?: boolean;
  errors?: PolicyErrors;
  /** revision recorded by this save; absent when nothing changed */
  revision?: number;
  unchanged?: boolean;
  /** hash of the file as it is now, to detect edits made elsewhere before the next save */
  base?: string;
  savedAt?: number;
}

/** FormData of the policy form → the raw object the schema parses. */
export function policyInput(fd: FormData): unknown {
  const retries = String(fd.get('retries') ?? '').trim();
  return {
    model: String(fd.get('model') ?? '').trim(),
    fallback_models: fd.getAll('fallback_models').map((v) => String(v).trim()),
    output: {
      retries: retries === '' ? undefined : Number(retries),
      on_error: fd.get('on_error'),
      on_refusal: fd.get('on_refusal'),
      on_truncated: fd.get('on_truncated'),
      strict: fd.get('strict') === 'on' || fd.get('strict') === 'true',
    },
  };
}

/** The form field of a path of the agent file (a zod issue's path, a diagnostic's path). */
export function diagnosticField(path: readonly PropertyKey[]): { field: PolicyField; index?: number } {
  const [a, b] = path;
  if (a === 'model') return { field: 'model' };
  if (a === 'fallback_models') return { field: 'fallback_models', index: typeof b === 'number' ? b : undefined };
  if (a === 'output' && typeof b === 'string') {
    const f = `output.${b}` as PolicyField;
    if (['output.retries', 'output.on_error', 'output.on_refusal', 'output.on_truncated', 'output.strict'].includes(f)) return { field: f };
  }
  return { field: 'form' };
}

export function policyErrors(error: z.ZodError): PolicyErrors {
  const out: PolicyErrors = {};
  for (const issue of error.issues) {
    const params = (issue as { params?: { code?: string; hint?: string } }).params;
    const { field, index } = diagnosticField(issue.path);
    (out[field] ??= []).push({ message: issue.message, code: params?.code ?? 'E_FIELD', hint: params?.hint, index });
  }
  return out;
}

/** Check diagnostics of the whole agent file (E_PROVIDER, E_STRICT, …), each at the form field of its path. */
export function diagnosticErrors(diagnostics: readonly Pick<Diagnostic, 'code' | 'message' | 'hint' | 'path'>[]): PolicyErrors {
  const out: PolicyErrors = {};
  for (const d of diagnostics) {
    const { field, index } = diagnosticField(d.path);
    (out[field] ??= []).push({ code: d.code, message: d.message, hint: d.hint, index });
  }
  return out;
}
