// Start a run of a flow with an input (DESIGN: The dashboard; CLI): `POST /api/runs` sends the input
// as JSON (`{"flow", "input"}`), the /flows form and `aqven run --input/--input-file` as JSON text;
// the flow name and the input are parsed here alike, and a refusal carries the code each door shows
// (E_FLOW, E_JSON, E_INPUT). Whether the flow exists and the input fits its schema and its size
// (input-size.ts) is checked when the run starts (validateRunInput): refused before anything is
// stored or queued. The caller's limits are callerLimits's, checked first.
import { z } from 'zod';
import { FIELD, type Labels, type Refusal, labelled } from './refusal';
import { INPUT_CODE } from './input-size';

/** the flow named is no flow of the project, or no name at all */
export const FLOW_CODE = 'E_FLOW';
/** the input typed is not JSON */
export const JSON_CODE = 'E_JSON';

const flow = z.string({ error: `${FIELD} must be a flow name` }).min(1, `${FIELD} must be a flow name`);

/** The input as JSON text (the form's textarea, the command's --input or file), parsed. */
const jsonText = z.string({ error: `${FIELD} is not valid JSON: nothing was sent` }).transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `${FIELD} is not valid JSON: ${err instanceof Error ? err.message : String(err)}` });
    return z.NEVER;
  }
});

/** `{flow, input}` as the API's JSON body carries it: an input left out is `{}`. */
export const startRunSchema = z.object({
  flow,
  input: z
    .unknown()
    .optional()
    .transform((v) => v ?? {}),
});

/** `{flow, input}` with the input as JSON text (the form, the command). */
export const startRunTextSchema = z.object({ flow, input: jsonText });

export type StartRunField = 'flow' | 'input';

/** The refusal of a failed parse: the flow (E_FLOW), else the input (E_JSON), in the door's words. */
export function startRunRefusal(error: z.ZodError, labels: Labels<StartRunField>): Refusal<StartRunField> {
  const issue = error.issues.find((i) => i.path[0] === 'flow') ?? error.issues[0]!;
  const field: StartRunField = issue.path[0] === 'flow' ? 'flow' : 'input';
  return { code: field === 'flow' ? FLOW_CODE : JSON_CODE, field, message: labelled(issue.message, labels[field] ?? field) };
}

/**
 * The code of a refusal when the run starts: an unknown flow (404) is E_FLOW; an input it does not
 * take (a field named), E_INPUT; a project that no longer passes check, E_PROJECT; storage, E_STORAGE.
 */
export function startRefusalCode(r: { status: number; field?: string }): string {
  if (r.status === 404) return FLOW_CODE;
  if (r.field !== undefined) return INPUT_CODE;
  return r.status === 503 ? 'E_STORAGE' : 'E_PROJECT';
}
