// One trial of the limits probe: one node of the limits run (probe.ts), called through the engine and
// recorded attempt by attempt like any node, then judged: first-try valid, valid after one repair, right.
import { explainHint } from '@/lib/shared/run-codes';
import type { RunStore } from '@/db/run-store';
import { callNode } from '@/lib/engine/call-node';
import type { AttemptRefusal, Clock, NodePolicy, NodeResult, SharedPauses, UsageTotals } from '@/lib/engine/types';
import { sumUsageRounded } from '@/lib/engine/usage';
import { NodeRecorder } from '@/lib/flow/recorder';
import { builtinAdapters } from '@/lib/providers';
import { newRecordId } from '@/lib/shared/record-id';
import { BUDGET_CODE } from '@/lib/shared/spend-budget';
import { answerCorrect, maxTokensFor, type LimitTask } from './tasks';
import { LIMITS_AGENT, type LimitsProbeOptions, type ProbeSession } from './probe-types';

/** answers one trial may take: the first and one repair */
export const CALLS_PER_TRIAL = 2;

/** What one trial came to. */
export interface Trial {
  kind: 'answered' | 'truncated' | 'error';
  firstTryValid: boolean;
  afterRepairValid: boolean;
  correct: boolean;
  calls: number;
  usage: UsageTotals;
}

export function judgeTrial(task: LimitTask, r: NodeResult): Trial {
  const first = r.attempts[0];
  const base = { calls: r.attempts.length, usage: r.usage, firstTryValid: false, afterRepairValid: false, correct: false };
  if (!first || first.outcome === 'error' || first.outcome === 'refusal') return { ...base, kind: 'error' };
  if (first.outcome === 'truncated') return { ...base, kind: 'truncated' };
  const firstTryValid = first.error === null;
  return {
    ...base,
    kind: 'answered',
    firstTryValid,
    afterRepairValid: r.status === 'succeeded',
    correct: firstTryValid && answerCorrect(task, r.output),
  };
}

/** A trial's attempt was refused: the caller's daily spend budget is spent (the trial's node failed with E_BUDGET). */
export class SpendStop extends Error {
  constructor(readonly refusal: { message: string; hint: string }) {
    super(refusal.message);
  }
}

/** What a trial needs of its probe, read when the trial starts. */
export interface TrialRoom {
  store: RunStore;
  runId: string;
  turn: number;
  clock: Clock;
  policy: NodePolicy;
  session: ProbeSession;
  options: LimitsProbeOptions;
  sharedPauses: SharedPauses;
  signal: AbortSignal;
  admit: (() => Promise<AttemptRefusal | null>) | undefined;
  /** counts calls and their usage for the run and the dimension's row */
  count: (calls: number, usage: UsageTotals) => void;
}

/** A judged trial; `error` is the failure text (redacted by the engine) when it ended in an error. */
export interface TrialEnd {
  trial: Trial;
  error: string | null;
}

/** One trial: a node of the limits run, recorded attempt by attempt like any node. */
export async function runTrial(room: TrialRoom, task: LimitTask, trial: number): Promise<TrialEnd> {
  const { store, runId, options: o } = room;
  const now = () => room.clock.now();
  const nodeRunId = newRecordId();
  const nodeId = `${task.dimension}-${task.level}-t${trial + 1}`;
  store.insertNode({ id: nodeRunId, runId, nodeId, agent: LIMITS_AGENT, turn: room.turn, ord: trial, status: 'running', policy: room.policy, startedAt: now() });
  const recorder = new NodeRecorder(store, runId, nodeRunId, now);
  const settings = { max_tokens: maxTokensFor(task.dimension, task.level, o.maxTokens), ...(o.temperature !== undefined && { temperature: o.temperature }) };
  let result: NodeResult;
  try {
    result = await callNode(
      { nodeId, agent: LIMITS_AGENT, agentFile: 'aqven limits', policy: room.policy, prompt: task.prompt, outputSchema: task.schema, settings },
      {
        providers: room.session.providers,
        adapters: builtinAdapters,
        clock: room.clock,
        gate: o.gate,
        env: room.session.env,
        sharedPauses: room.sharedPauses,
        onEvent: recorder.onEvent,
        signal: room.signal,
        admit: room.admit,
      },
    );
  } catch (err) {
    // stopped mid-call: the attempts in flight are closed as interrupted, their usage kept
    const signal = room.signal;
    const why = signal.aborted ? `stopped: ${signal.reason instanceof Error ? signal.reason.message : 'aborted'}` : err instanceof Error ? err.message : String(err);
    const cut = recorder.interrupt(why);
    const usage = sumUsageRounded(cut.attempts.map((a) => a.usage));
    store.finishNode({
      id: nodeRunId,
      runId,
      status: 'failed',
      output: null,
      error: { code: 'interrupted', message: why, hint: explainHint('interrupted', 'Run aqven limits again: it resumes the levels measured today.') },
      usage,
      finishedAt: now(),
    });
    await cut.written;
    room.count(cut.attempts.length, usage);
    throw err;
  }
  store.finishNode({
    id: nodeRunId,
    runId,
    status: result.status,
    output: result.output ?? null,
    error: result.error,
    usage: sumUsageRounded(result.attempts.map((a) => a.usage)),
    finishedAt: now(),
  });
  // no call of this trial was sent past the spent budget: the probe stops (its calls before are counted)
  if (result.error?.code === BUDGET_CODE) {
    room.count(result.attempts.length, sumUsageRounded(result.attempts.map((a) => a.usage)));
    throw new SpendStop(result.error);
  }
  const judged = judgeTrial(task, result);
  return { trial: judged, error: judged.kind === 'error' ? (result.attempts[0]?.error?.message ?? result.error?.message ?? null) : null };
}
