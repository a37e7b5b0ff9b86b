// Replay with the current policy (DESIGN: The dashboard, "Replay"): one node of a finished run run
// again with its original inputs — the run input and the stored outputs of the nodes it needs —
// rendered through the agent and flow files as they are now. A replay is a new run of kind
// `replay` (replay_of, replay_node) recorded like any run, through the run loop and the run store;
// statistics do not count it. In order: plan it (refused, with a code, when an input it needs was
// never produced), diff its request against the original's, estimate its cost, start it under a
// cost cap. A batch replays many nodes with bounded concurrency under one cap.
import { diffLines } from 'diff';
import { agentCostHistory, replayLink, type AgentCostHistory } from '@/db/replay-queries';
import { getRunFacts } from '@/db/queries';
import { resolveRunId, type RunIdMatch } from '@/db/run-id-queries';
import type { Db, NodeFacts, RunStatus } from '@/db/types';
import { initialMessages } from '@/lib/engine/messages';
import { answerLimit, endsNode } from '@/lib/engine/policy';
import type { Clock, Message, NodePolicy } from '@/lib/engine/types';
import { roundCost } from '@/lib/engine/usage';
import { agentPolicy, renderTemplate, type Project } from '@/lib/project';
import type { ResolvedProvider } from '@/lib/engine/types';
import { own } from '@/lib/shared/own';
import { newRecordId } from '@/lib/shared/record-id';
import { fmtCost } from '@/lib/shared/cost-text';
import { ambiguousRunIdWords } from '@/lib/shared/short-id';
import { beginRun, RunInputError, RunInterruptedError, validateRunInput, type ProgressEvent } from './run-flow';
import type { RunRecord } from './run-record';

/** Why a replay cannot be planned or started: a code the forms map to a field, and words that say what to do. */
export type ReplayRefusalCode =
  | 'E_RUN' // no such run
  | 'E_RUN_AMBIGUOUS' // the short id or prefix names several runs: `ambiguous` lists them
  | 'E_RUNNING' // the run has not ended
  | 'E_NODE' // the run has no such node
  | 'E_FLOW' // the flow is gone from the project
  | 'E_FLOW_NODE' // the node is gone from the flow
  | 'E_INPUT_MISSING' // a node it needs never produced an output in the original run
  | 'E_INPUT' // the run input no longer fits the flow's input schema
  | 'E_CAP'; // the estimate is over the cost cap

export class ReplayRefusedError extends Error {
  constructor(
    readonly code: ReplayRefusalCode,
    message: string,
    /** E_RUN_AMBIGUOUS: the runs the id could mean, newest first (never one of them guessed) */
    readonly ambiguous?: { matches: RunIdMatch[]; more: boolean },
  ) {
    super(message);
    this.name = 'ReplayRefusedError';
  }
}

const usd = fmtCost;

/** What a replay will run: the original node as stored, and the request today's files make of its inputs. */
export interface ReplayPlan {
  /** the original run */
  runId: string;
  flow: string;
  nodeId: string;
  /** the agent that runs the node today (the flow may have changed it) */
  agent: string;
  input: unknown;
  /** the outputs of the node's needs (today's flow) as the original run stored them */
  outputs: Record<string, unknown>;
  /** the original node as stored */
  original: NodeFacts;
  /** the request of the original node's first attempt; null when it never made one (skipped) */
  originalRequest: Message[] | null;
  /** the request the current files make of the same inputs (the first attempt's) */
  request: Message[];
  policyBefore: NodePolicy | null;
  policyNow: NodePolicy;
}

/** Why a need's output is missing, in the words of the refusal. */
function missingWhy(n: NodeFacts | undefined): string {
  if (!n) return 'never ran in that run';
  if (n.status === 'failed') return 'failed in that run';
  if (n.status === 'skipped') return 'was skipped in that run';
  return `ended ${n.status} in that run`;
}

/**
 * The full id of the run `idOrPrefix` names — its id, short id or a unique prefix, as everywhere a
 * run id is taken (db/run-id-queries.ts); refused when it names none (E_RUN) or several (E_RUN_AMBIGUOUS).
 */
async function replayedRunId(db: Db, idOrPrefix: string): Promise<string> {
  const named = await resolveRunId(db, idOrPrefix);
  if (named.kind === 'found') return named.id;
  if (named.kind === 'none') throw new ReplayRefusedError('E_RUN', `no run ${idOrPrefix} is stored`);
  throw new ReplayRefusedError('E_RUN_AMBIGUOUS', `"${idOrPrefix}" ${ambiguousRunIdWords(named.matches.length, named.more)}; give more of it`, {
    matches: named.matches,
    more: named.more,
  });
}

/**
 * The replay of node `nodeId` of run `idOrPrefix` (its id, short id or a unique prefix: the plan
 * carries the full id) under `project` as it is now; ReplayRefusedError when
 * the run has not ended, the node or its flow is gone, or a node it needs (today) produced no output.
 */
export async function planReplay(db: Db, project: Project, idOrPrefix: string, nodeId: string): Promise<ReplayPlan> {
  const runId = await replayedRunId(db, idOrPrefix);
  const facts = await getRunFacts(db, runId);
  if (!facts) throw new ReplayRefusedError('E_RUN', `no run ${idOrPrefix} is stored`);
  if (facts.status === 'queued' || facts.status === 'running')
    throw new ReplayRefusedError('E_RUNNING', `run ${runId} is still ${facts.status}: replay its nodes once it has ended`);
  const original = facts.nodes.find((n) => n.id === nodeId);
  if (!original) throw new ReplayRefusedError('E_NODE', `run ${runId} has no node "${nodeId}"`);
  const flow = own(project.flows, facts.flow);
  if (!flow) throw new ReplayRefusedError('E_FLOW', `the project has no flow "${facts.flow}" any more: the node cannot be rendered through today's files`);
  const node = own(flow.nodes, nodeId);
  if (!node) throw new ReplayRefusedError('E_FLOW_NODE', `flow ${flow.name} (${flow.file}) has no node "${nodeId}" any more`);
  const stored = new Map(facts.nodes.map((n) => [n.id, n]));
  const outputs: Record<string, unknown> = {};
  for (const need of node.needs) {
    const n = stored.get(need);
    if (n?.status !== 'succeeded') {
      throw new ReplayRefusedError(
        'E_INPUT_MISSING',
        `node "${nodeId}" needs the output of "${need}", which ${missingWhy(n)}: run ${runId} never produced that input, so there is nothing to replay it with`,
      );
    }
    outputs[need] = n.output;
  }
  try {
    validateRunInput(flow, facts.input, { maxBytes: Infinity });
  } catch (err) {
    if (err instanceof RunInputError) throw new ReplayRefusedError('E_INPUT', `the run's input no longer fits flow ${flow.name}: ${err.message}`);
    throw err;
  }
  const agent = project.agents[node.agent]!;
  const policyNow = agentPolicy(agent);
  const prompt = renderTemplate(node.prompt, { input: facts.input, nodes: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { output: v }])) });
  const request = initialMessages({
    nodeId,
    agent: agent.name,
    agentFile: agent.file,
    policy: policyNow,
    system: agent.system,
    settings: agent.settings,
    prompt,
    outputSchema: node.output,
    stream: node.stream,
  });
  const first = original.attempts[0];
  return {
    runId,
    flow: flow.name,
    nodeId,
    agent: agent.name,
    input: facts.input,
    outputs,
    original,
    originalRequest: first ? first.request : null,
    request,
    policyBefore: original.policy,
    policyNow,
  };
}

/**
 * What a replay run taken over from a dead process runs (lib/flow/resume.ts): its one node, with
 * the outputs of its needs from the original run again; null for a run that is no replay. A
 * RunInputError when the original or an output it needs is no longer stored (the run then fails).
 */
export async function replayScope(db: Db, project: Project, runId: string): Promise<{ node: string; outputs: Record<string, unknown> } | null> {
  const link = await replayLink(db, runId);
  if (link?.kind !== 'replay') return null;
  const node = link.replayNode ?? '';
  if (!link.replayOf) throw new RunInputError(`replay ${runId} cannot go on: the run it replays is no longer stored`, 'input');
  try {
    return { node, outputs: (await planReplay(db, project, link.replayOf, node)).outputs };
  } catch (err) {
    if (err instanceof ReplayRefusedError) throw new RunInputError(`replay ${runId} cannot go on: ${err.message}`, 'input');
    throw err;
  }
}

/** A request as one text, a heading per message: what the prompt diff compares. */
export function requestText(messages: readonly Message[]): string {
  return messages.map((m) => `── ${m.role} ──\n${m.content.endsWith('\n') ? m.content : `${m.content}\n`}`).join('');
}

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** The original request against today's, line by line (the `diff` package); `changed` false when they are the same. */
export function promptDiff(plan: Pick<ReplayPlan, 'originalRequest' | 'request'>): { changed: boolean; lines: DiffLine[] } {
  const before = plan.originalRequest ? requestText(plan.originalRequest) : '';
  const after = requestText(plan.request);
  const lines: DiffLine[] = [];
  for (const part of diffLines(before, after)) {
    const op = part.added ? '+' : part.removed ? '-' : ' ';
    const texts = part.value.split('\n');
    if (texts[texts.length - 1] === '') texts.pop();
    for (const text of texts) lines.push({ op, text });
  }
  return { changed: before !== after, lines };
}

/** The policy fields that differ between the original node and today's agent, as `field: before → now`. */
export function policyChanges(before: NodePolicy | null, now: NodePolicy): string[] {
  if (!before) return ['(the original node stored no policy)'];
  const show = (v: unknown) => (Array.isArray(v) ? v.join(' → ') : String(v));
  const fields: (keyof NodePolicy)[] = ['chain', 'retries', 'onError', 'onRefusal', 'onTruncated', 'strict'];
  return fields.filter((f) => show(before[f]) !== show(now[f])).map((f) => `${f}: ${show(before[f])}  ⇒  ${show(now[f])}`);
}

export interface ReplayEstimate {
  /** what the replay is expected to cost */
  costUsd: number;
  /** which figure the estimate is: the original node's cost, or the agent's mean cost per node */
  basis: 'original' | 'history' | 'none';
  originalCostUsd: number;
  history: AgentCostHistory;
  /** the most answers today's policy allows the node (retries + 1 per model of the chain) */
  maxAnswers: number;
}

/** nodes of the agent's history the estimate reads */
export const ESTIMATE_HISTORY_NODES = 100;

/**
 * The cost a replay is expected to have: the larger of the original node's cost and the agent's
 * mean cost per node over its last ESTIMATE_HISTORY_NODES finished nodes of flow runs — a node that
 * failed fast cost little, and today's policy may try more models.
 */
export async function estimateReplay(db: Db, plan: ReplayPlan, history?: AgentCostHistory): Promise<ReplayEstimate> {
  const h = history ?? (await agentCostHistory(db, plan.agent, ESTIMATE_HISTORY_NODES));
  const originalCostUsd = roundCost(plan.original.attempts.reduce((s, a) => s + a.usage.costUsd, 0));
  const fromHistory = h.nodes > 0 ? h.avgCostUsd : 0;
  const basis = originalCostUsd === 0 && fromHistory === 0 ? 'none' : originalCostUsd >= fromHistory ? 'original' : 'history';
  return { costUsd: roundCost(Math.max(originalCostUsd, fromHistory)), basis, originalCostUsd, history: h, maxAnswers: answerLimit(plan.policyNow) * plan.policyNow.chain.length };
}

/** How the estimate was made, in a sentence the preview page shows next to it. */
export function estimateBasis(e: ReplayEstimate): string {
  const hist =
    e.history.nodes > 0 ? `the agent's mean cost per node over its last ${e.history.nodes} nodes of flow runs (${usd(e.history.avgCostUsd)})` : 'no cost history of the agent';
  if (e.basis === 'none') return `no cost known: the original node cost nothing and there is ${hist}`;
  if (e.basis === 'original') return `the original node's cost (${usd(e.originalCostUsd)}), the larger of it and ${hist}`;
  return `${hist}, larger than the original node's cost (${usd(e.originalCostUsd)})`;
}

/** What a replay runs with: the project as it is now and where its run is recorded. */
export interface ReplayDeps {
  project: Project;
  providers: Record<string, ResolvedProvider>;
  env?: Record<string, string | undefined>;
  db: Db;
  clock?: Clock;
  fetch?: typeof fetch;
  startedBy?: string | null;
  projectHash?: string | null;
  snapshotId?: number | null;
}

export interface ReplayStartOptions {
  /** the replay refuses to start when `estimateUsd` is over it, and makes no further attempt once its cost reaches it; null: no cap */
  capUsd?: number | null;
  estimateUsd?: number | null;
  /** stops the replay from outside (a batch past its cap): it ends interrupted */
  signal?: AbortSignal;
  /** hears each attempt's cost as it is recorded; `more`: the node goes on to another attempt */
  onCost?: (usd: number, more: boolean) => void;
  onProgress?: (e: ProgressEvent) => void;
  runId?: string;
}

export interface ReplayResult {
  runId: string;
  status: RunStatus;
  costUsd: number;
  /** the replay was stopped at its cost cap */
  capped: boolean;
  record: RunRecord;
}

export interface StartedReplay {
  runId: string;
  done: Promise<ReplayResult>;
}

/** The cost of an engine event — a finished attempt's, or what an attempt cut off had been billed — and whether another attempt follows. */
function eventCost(e: ProgressEvent): { usd: number; more: boolean } | null {
  if (e.type !== 'engine') return null;
  if (e.event.type === 'attempt_end') return { usd: e.event.attempt.usage.costUsd, more: !endsNode(e.event.attempt.action) };
  if (e.event.type === 'attempt_interrupted') return { usd: e.event.usage.costUsd, more: false };
  return null;
}

/**
 * Starts the replay (its run row committed first: a StorageError before any provider is called) as
 * a run of kind `replay` of one node, its needs' outputs given. Refused (E_CAP) when the estimate is
 * over the cap; once what it spent reaches the cap it is stopped before its next attempt — ended
 * interrupted, what was spent recorded. An answer already paid for is kept, even past the cap.
 */
export async function startReplay(plan: ReplayPlan, deps: ReplayDeps, o: ReplayStartOptions = {}): Promise<StartedReplay> {
  const cap = o.capUsd ?? null;
  if (cap !== null && o.estimateUsd != null && o.estimateUsd > cap) {
    throw new ReplayRefusedError('E_CAP', `the replay is estimated at ${usd(o.estimateUsd)}, over the cost cap of ${usd(cap)}: raise the cap to start it`);
  }
  // the cap's own stop, or the caller's: run-flow turns the caller's reason into the run's
  const ac = new AbortController();
  const signal = o.signal ? AbortSignal.any([ac.signal, o.signal]) : ac.signal;
  let spent = 0;
  let capped = false;
  const onProgress = (e: ProgressEvent) => {
    o.onProgress?.(e);
    const cost = eventCost(e);
    if (!cost) return;
    spent += cost.usd;
    o.onCost?.(cost.usd, cost.more);
    if (cap !== null && cost.more && spent >= cap && !signal.aborted) {
      capped = true;
      ac.abort(new RunInterruptedError(`stopped at the replay's cost cap of ${usd(cap)} (${usd(spent)} spent)`));
    }
  };
  const started = await beginRun({
    project: deps.project,
    flow: plan.flow,
    input: plan.input,
    providers: deps.providers,
    env: deps.env,
    db: deps.db,
    clock: deps.clock,
    fetch: deps.fetch,
    runId: o.runId ?? newRecordId(),
    startedBy: deps.startedBy ?? null,
    projectHash: deps.projectHash ?? null,
    snapshotId: deps.snapshotId ?? null,
    signal,
    onProgress,
    runKind: { kind: 'replay', replayOf: plan.runId, replayNode: plan.nodeId },
    only: { node: plan.nodeId, outputs: plan.outputs },
  });
  const done = started.done.then((record) => ({ runId: started.runId, status: record.status, costUsd: record.usage.costUsd, capped, record }));
  return { runId: started.runId, done };
}
