// Save an agent's policy from its page (DESIGN: The dashboard, the agent policy form; lib/actions/
// save-agent-policy.ts): the agent named, and the policy fields parsed with the agent file's own
// rules — lib/project/schema.ts's, the same as `aqven check` (E_MODEL, E_OUTCOME_FALLBACK,
// E_CHAIN_DUPLICATE, E_FIELD), each issue at its field. The what-if of the same form
// (estimate-policy) parses its draft with it too.
import { z } from 'zod';
// the schema module itself, not the lib/project index: the index also loads files (node:fs)
import { agentPolicyFormSchema, type AgentPolicyForm } from '@/lib/project/schema';
import { recordId } from './record-id';

/** the agent is none of the project's, or none is named */
export const AGENT_CODE = 'E_AGENT';
/** The refusal's words for an agent the project does not have (saving its policy, or estimating it). */
export const noSuchAgent = (name: string) => `the project has no agent "${name}"`;
/** the file was changed after the form was opened */
export const CONFLICT_CODE = 'E_CONFLICT';

export const savePolicySchema = agentPolicyFormSchema;
export type SavePolicy = AgentPolicyForm;

/** The agent a save names, and the hash of its file as the form was opened on it (empty: not known). */
export const savePolicyTargetSchema = z.object({ agent: recordId, base: z.string().max(200, 'the base hash is at most 200 characters') });
