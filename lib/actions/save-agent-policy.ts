'use server';
// Saves the agent policy form (DESIGN: The dashboard): validated with the form's schema
// (E_OUTCOME_FALLBACK included), written into the agent file through lib/project's
// updateAgentYaml (comments and keys the form does not know survive), checked again as a whole
// agent file against the project's providers (E_PROVIDER, E_STRICT), recorded as a policy
// revision, and picked up by the session so the next run uses it. PostgreSQL mode: the file is
// saved as a new project snapshot (DESIGN: Storage, "The project in the database"), which the
// revision names.
import { revalidatePath } from 'next/cache';
import { AGENT_CODE, CONFLICT_CODE, noSuchAgent, savePolicyTargetSchema } from '@/lib/contracts/save-policy';
import { firstIssue } from '@/lib/contracts/refusal';
import { recordPolicyRevision } from '@/db/policy-queries';
import { unifiedDiff } from '@/lib/dashboard/line-diff';
import { agentPolicyFormSchema, diagnosticErrors, policyErrors, policyInput, type AgentPolicyForm, type SaveAgentPolicyState } from '@/lib/forms/agent-policy';
import { AgentYamlError, parseAgentYaml, updateAgentYaml, type AgentDef, type AgentYamlChanges } from '@/lib/project';
import { readAgentFile, saveAgentFile, textHash } from '@/lib/server/agent-file';
import { reloadProject } from '@/lib/server/project-reload';
import { actionCaller } from '@/lib/server/access';
import { auditRequest } from '@/lib/server/audit';
import { serverSession } from '@/lib/server/session';

const formError = (code: string, message: string): SaveAgentPolicyState => ({ ok: false, errors: { form: [{ code, message }] } });
/** the file is not the one the form was opened on: `what` says how ("was changed on disk") */
const conflict = (file: string, what: string) => formError(CONFLICT_CODE, `${file} ${what} after this form was opened; reload the page to edit the file as it is now`);

/** who saves through the dashboard (there are no user accounts yet) */
/** the author of a save while the dashboard is open (no account exists yet) */
const OPEN_AUTHOR = 'dashboard';

/** Only what the form changed, so a field the file leaves to its default stays unwritten. */
function changesFrom(current: AgentDef | null, next: AgentPolicyForm): AgentYamlChanges {
  const o = current?.output;
  const same = (a: string[] | undefined, b: string[]) => !!a && a.length === b.length && a.every((x, i) => x === b[i]);
  const pick = <T>(now: T | undefined, v: T) => (now !== undefined && now === v ? undefined : v);
  return {
    model: pick(current?.model, next.model),
    fallback_models: same(current?.fallbackModels, next.fallback_models) ? undefined : next.fallback_models,
    output: {
      retries: pick(o?.retries, next.output.retries),
      on_error: pick(o?.onError, next.output.on_error),
      on_refusal: pick(o?.onRefusal, next.output.on_refusal),
      on_truncated: pick(o?.onTruncated, next.output.on_truncated),
      strict: pick(o?.strict, next.output.strict),
    },
  };
}

export async function saveAgentPolicy(_prev: SaveAgentPolicyState, fd: FormData): Promise<SaveAgentPolicyState> {
  const who = await actionCaller('editor');
  if (!who.ok) return formError('E_FORBIDDEN', who.error);
  const author = who.caller.author ?? OPEN_AUTHOR;
  const target = savePolicyTargetSchema.safeParse({ agent: fd.get('agent') ?? undefined, base: fd.get('base') ?? '' });
  if (!target.success) return formError(AGENT_CODE, firstIssue(target.error, ['agent', 'base'], { agent: 'the agent' }).message);
  const { agent: name, base } = target.data;
  const parsed = agentPolicyFormSchema.safeParse(policyInput(fd));
  if (!parsed.success) return { ok: false, errors: policyErrors(parsed.error) };

  const s = await serverSession();
  const file = await readAgentFile(s.project, name);
  if (!file) return formError(AGENT_CODE, noSuchAgent(name));
  if (base && base !== file.hash) return conflict(file.file, s.snapshotId === null ? 'was changed on disk' : 'was changed in the project');

  let after: string;
  try {
    after = updateAgentYaml(file.text, changesFrom(parseAgentYaml(file.text, file.file).agent, parsed.data));
  } catch (err) {
    if (err instanceof AgentYamlError) return formError('E_FIELD', `${file.file}: ${err.message}`);
    throw err;
  }
  if (after === file.text) return { ok: true, unchanged: true, base: file.hash, savedAt: Date.now() };

  // the whole file as it would be written, with the project's providers (E_PROVIDER, E_STRICT)
  const problems = parseAgentYaml(after, file.file, { providers: s.project.providers }).diagnostics.filter((d) => d.severity === 'error');
  // each diagnostic carries the field it is about (d.path): the form places it there
  if (problems.length) return { ok: false, errors: diagnosticErrors(problems) };

  const saved = await saveAgentFile(s, file, after, { author, note: `policy ${name}` });
  if (!saved.ok) {
    const where = saved.snapshotId === null ? 'the project' : `the project (snapshot ${saved.snapshotId})`;
    return conflict(file.file, saved.conflict === 'removed' ? `was removed from ${where}` : `was changed in ${where}`);
  }
  const pg = saved.snapshotId !== null;
  const revision = await recordPolicyRevision(s.db, {
    agent: name,
    yaml: after,
    diff: unifiedDiff(file.text, after, { fromFile: file.file }),
    author,
    ...(pg && { snapshotId: saved.snapshotId }),
  });
  await auditRequest(s.db, { kind: 'policy.saved', actor: who.caller.author, target: name, detail: { revision: revision.revision, ...(pg && { snapshot: saved.snapshotId }) } });
  const reload = await reloadProject();
  revalidatePath('/agents');
  revalidatePath(`/agents/${name}`);
  if (!reload.ok) {
    const d = reload.diagnostics[0];
    return {
      ok: true,
      revision: revision.revision,
      base: textHash(after),
      savedAt: Date.now(),
      errors: { form: [{ code: d?.code ?? 'E_FIELD', message: `saved, but the project no longer loads: ${d ? `${d.file}:${d.line}:${d.col} ${d.message}` : 'see aqven check'}` }] },
    };
  }
  return { ok: true, revision: revision.revision, base: textHash(after), savedAt: Date.now() };
}
