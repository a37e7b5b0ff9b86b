'use server';
// The what-if of the agent policy form (DESIGN: The dashboard): any signed-in role may ask. The
// draft is checked with the form's schema, today's policy is read from the agent file as it is on
// disk (as the page shows it), the history is the agent's last N finished nodes of flow runs, and
// lib/dashboard/what-if replays it through the engine's decide(). Nothing is written.
import { agentNodeHistory } from '@/db/what-if-queries';
import { noSuchAgent } from '@/lib/contracts/save-policy';
import { whatIf, type WhatIfResult } from '@/lib/dashboard/what-if';
import type { NodePolicy } from '@/lib/engine/types';
import { estimatePolicySchema, type EstimatePolicyRequest } from '@/lib/forms/estimate-policy';
import type { AgentPolicyForm } from '@/lib/forms/agent-policy';
import { agentPolicy, parseAgentYaml } from '@/lib/project';
import { readAgentFile } from '@/lib/server/agent-file';
import { actionCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';
import { own } from '@/lib/shared/own';

export type EstimatePolicyResult = { ok: true; result: WhatIfResult } | { ok: false; error: string };

function nodePolicy(f: AgentPolicyForm): NodePolicy {
  return {
    chain: [f.model, ...f.fallback_models],
    retries: f.output.retries,
    onError: f.output.on_error,
    onRefusal: f.output.on_refusal,
    onTruncated: f.output.on_truncated,
    strict: f.output.strict,
  };
}

export async function estimatePolicy(request: EstimatePolicyRequest): Promise<EstimatePolicyResult> {
  const who = await actionCaller('viewer');
  if (!who.ok) return { ok: false, error: who.error };
  const parsed = estimatePolicySchema.safeParse(request);
  if (!parsed.success) return { ok: false, error: 'the draft policy does not pass the form’s checks: fix the fields marked above' };
  const { agent: name, window, policy } = parsed.data;

  const s = await serverSession();
  const agent = own(s.project.agents, name);
  if (!agent) return { ok: false, error: noSuchAgent(name) };
  const file = await readAgentFile(s.project, name);
  const today = (file && parseAgentYaml(file.text, file.file).agent) || agent;
  const history = await agentNodeHistory(s.db, name, window);
  return { ok: true, result: whatIf({ agent: name, window, history, draft: nodePolicy(policy), today: agentPolicy(today) }) };
}
