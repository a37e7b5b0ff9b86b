// The codes a failed run or node reports (DESIGN: The run record), in one table: what each means
// and the fix. `aqven explain CODE` prints an entry, docs/errors.md is generated from it
// (`npm run docs:generate`, its second part), and every stored hint ends with `aqven explain CODE`
// (explainHint). A code a run or node can end with is a RunCode: a site that makes a new one
// passes it to explainHint, so it cannot compile until it has its entry here.
import { BUDGET_CODE } from './spend-budget';

/** How an attempt failed, and the code of a node the outcome policy failed (lib/engine/types.ts `Cause`). */
export const NODE_CAUSES = ['provider_error', 'refusal', 'truncated', 'invalid_output', 'quota'] as const;

/** Every code a failed node or run carries in its `error.code`. */
export const RUN_CODES = [...NODE_CAUSES, BUDGET_CODE, 'interrupted', 'cannot_record', 'internal_error', 'unknown_flow', 'invalid_input', 'limits_error'] as const;
export type RunCode = (typeof RUN_CODES)[number];

export interface RunCodeReference {
  code: RunCode;
  /** one line */
  title: string;
  /** who carries it: a failed node (and its run, when that node failed it), or only the run */
  on: 'node' | 'run';
  means: string;
  fix: string;
}

export const RUN_CODE_REFERENCE: readonly RunCodeReference[] = [
  {
    code: 'provider_error',
    title: 'the provider answered with an error, and the outcome policy stopped there',
    on: 'node',
    means:
      'The last attempt ended with the outcome error: an HTTP error (after the transport re-tries of a 429, 5xx, timeout or dropped connection were spent), or a finish reason that says error. output.on_error decided to fail the node, or its retries or fallback models were used up. A 4xx other than 429 (a bad key, a malformed request) is not resent.',
    fix: 'Read the attempt’s error on the run page or in aqven show. For a passing failure set output.on_error to "retry" (or raise output.retries); to route around a model, set it to "fallback" with fallback_models. A rejected request needs the request or the provider’s key fixed.',
  },
  {
    code: 'refusal',
    title: 'the model declined to answer',
    on: 'node',
    means:
      'The provider’s finish reason (or its refusal field) says the model refused, e.g. a content filter. output.on_refusal is "fail" by default, or its retries or fallback models were used up.',
    fix: 'Change the prompt or the input that was refused, or set output.on_refusal to "retry" or to "fallback" with a model that answers it.',
  },
  {
    code: 'truncated',
    title: 'the answer was cut off before it ended',
    on: 'node',
    means:
      'The finish reason says the answer hit its length limit (max_tokens, or the model’s own). A cut-off answer is never parsed or repaired: it could look complete and is not. output.on_truncated is "fail" by default.',
    fix: 'Raise settings.max_tokens, ask for a shorter answer, or set output.on_truncated to "retry" or "fallback".',
  },
  {
    code: 'invalid_output',
    title: 'the answer did not fit the node’s output schema, and the repairs ran out',
    on: 'node',
    means:
      'The call ended ok, but its JSON did not parse or did not match the schema; AQVEN sent the validation errors back for a repair until the model’s answers (output.retries + 1) were used up.',
    fix: 'Raise output.retries, set output.strict to true where the provider has structured outputs, or make the schema simpler (aqven limits MODEL measures what a model gets right).',
  },
  {
    code: 'quota',
    title: 'the provider said the account’s quota or spend limit is spent',
    on: 'node',
    means: 'An error that waiting will not clear (out of credits, a plan or spend limit): the same model is never asked again in this node, whatever output.on_error says.',
    fix: 'Add credits or raise the limit in the provider’s account, or list another provider’s model in fallback_models and set output.on_error to "fallback".',
  },
  {
    code: BUDGET_CODE,
    title: 'the caller’s daily spend budget is spent',
    on: 'node',
    means:
      'The user or token that started the run has a budget per UTC day (aqven user budget, aqven token budget), and its runs have spent it: the next attempt was not sent and the node failed. The budget is whole again at 00:00 UTC.',
    fix: 'Wait for 00:00 UTC, or raise the budget: aqven user budget NAME 10/day (or aqven token budget NAME …).',
  },
  {
    code: 'interrupted',
    title: 'the run was stopped before the node finished',
    on: 'node',
    means:
      'A signal (Ctrl-C, SIGTERM), a caller’s abort, or a process that died stopped the run while the node was running or waiting. Every attempt that finished is kept; an attempt in flight is closed as cut off.',
    fix: 'Start the run again (a limits probe resumes the levels measured today). A worker that stops on its own hands its runs back instead.',
  },
  {
    code: 'cannot_record',
    title: 'the run database could not be written',
    on: 'node',
    means: 'A write of the run’s facts failed (a full disk, a read-only file, a lost connection): the run was stopped rather than go on unrecorded.',
    fix: 'Fix the storage problem the message names (aqven db status shows the database), then start the run again.',
  },
  {
    code: 'internal_error',
    title: 'AQVEN stopped unexpectedly while running the node',
    on: 'node',
    means: 'A bug in AQVEN, not in the project or the provider: the engine or the worker threw where it should not. The attempts recorded so far are kept.',
    fix: 'Start the run again; if it repeats, report it with the message and aqven show RUN --json.',
  },
  {
    code: 'unknown_flow',
    title: 'the run’s flow is no longer in the project',
    on: 'run',
    means: 'A queued run (or one a worker took over) names a flow the project’s newest snapshot does not have: it was removed or renamed after the run started.',
    fix: 'Push a project that has the flow (aqven project push DIR) and start the run again.',
  },
  {
    code: 'invalid_input',
    title: 'the run’s input no longer fits its flow’s input schema',
    on: 'run',
    means: 'The flow’s input schema changed after the run was queued or started, and a worker taking it up found its input does not fit.',
    fix: 'Start the run again with an input that fits the flow’s input schema.',
  },
  {
    code: 'limits_error',
    title: 'a structural-limits probe stopped on an error',
    on: 'run',
    means: 'aqven limits (or the dashboard’s probe) could not go on: the message names the cause. What it measured so far is kept.',
    fix: 'Fix the cause named in the message, then run aqven limits again: it resumes the levels measured today.',
  },
];

export function runCodeReference(code: string): RunCodeReference | null {
  return RUN_CODE_REFERENCE.find((r) => r.code === code) ?? null;
}

/** An entry as `aqven explain` prints it and docs/errors.md shows it (markdown that reads as plain text). */
export function formatRunCodeReference(r: RunCodeReference): string {
  const where =
    r.on === 'node' ? 'a failed node’s error (and its run’s, when that node failed the run).' : 'a run’s error: the run could not go on under the project as it is now.';
  return [`## ${r.code}`, '', `**${r.title}.**`, '', r.means, '', `Where: ${where}`, '', `Fix: ${r.fix}`, ''].join('\n');
}

/** what ends every stored hint: the command that prints the code's page */
export const explainCommand = (code: string) => `aqven explain ${code}`;

/**
 * A failed node's or run's hint as it is stored and shown: the words of the site that made it, then
 * the command that prints the code's page. Idempotent: a hint that ends with it already is kept.
 */
export function explainHint(code: RunCode, hint: string): string {
  const see = `see: ${explainCommand(code)}`;
  const text = hint.trim();
  if (text.endsWith(see)) return text;
  return text ? `${text} — ${see}` : see;
}
