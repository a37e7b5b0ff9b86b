// The what-if request of the agent policy form: which agent, how many of its last nodes, and the
// draft policy in the form's own shape, checked by the form's schema (the rules of `aqven check`).
import { z } from 'zod';
import { agentPolicyFormSchema } from './agent-policy';

/** The windows the panel offers: the agent's last N finished nodes of flow runs. */
export const WHAT_IF_WINDOWS = [20, 50, 100, 200, 500] as const;
export const WHAT_IF_DEFAULT_WINDOW = 200;

export const estimatePolicySchema = z.object({
  agent: z.string().min(1).max(200),
  window: z.literal(WHAT_IF_WINDOWS),
  policy: agentPolicyFormSchema,
});

export type EstimatePolicyRequest = z.input<typeof estimatePolicySchema>;
