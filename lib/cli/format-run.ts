// Human output of a run: a header, a line per node and a line per attempt (used by `aqven run`
// and `aqven show`), plus the live progress block `aqven run` draws on a TTY.
import type { RunListItem } from '@/db/queries';
import type { EngineEvent } from '@/lib/engine/types';
import type { ProgressEvent } from '@/lib/flow/run-flow';
import type { RunRecord } from '@/lib/flow/run-record';
import type { RunEvent } from '@/lib/flow/run-events';
import { originLine, PURGED_ORIGINAL_REPLAY } from '@/lib/dashboard/run-origin';
import { shortRunId } from '@/lib/shared/short-id';
import { printable } from './printable';

const usd = (n: number) => `$${n.toFixed(6)}`;
const tokens = (u: { inputTokens: number; outputTokens: number }) => `${u.inputTokens} in / ${u.outputTokens} out`;

/** "usage unknown", with what became of its lookup from the provider (DESIGN: Usage unknown, never zero) */
function usageNote(a: RunRecord['nodes'][number]['attempts'][number]): string {
  if (!a.usageUnknown) return a.usageLookup === 'found' ? '  usage found later' : '';
  if (a.usageLookup === 'pending') return '  usage unknown (lookup pending)';
  if (a.usageLookup === 'gave_up') return '  usage unknown (lookup gave up)';
  return '  usage unknown';
}

/** an unpriced model's cost is unknown, never $0; reasoning tokens said apart (part of the output) */
function costNote(a: RunRecord['nodes'][number]['attempts'][number]): string {
  return `${a.costSource === 'none' ? '  cost unknown (unpriced)' : ''}${a.reasoningTokens ? `  ${a.reasoningTokens} reasoning tokens` : ''}`;
}

/** What a run that is no plain flow run is: `replay of 0a9ba381 · node draft`, `limits probe`; null for a flow run. */
export function runKindMark(r: Pick<RunRecord, 'kind' | 'replayOf' | 'replayNode'>): string | null {
  if (r.kind === 'limits') return 'limits probe';
  if (r.kind !== 'replay') return null;
  return `${r.replayOf ? `replay of ${shortRunId(r.replayOf)}` : PURGED_ORIGINAL_REPLAY}${r.replayNode ? ` · node ${r.replayNode}` : ''}`;
}

/** A try as it ended: its HTTP status, its transport error, or both (`200 connection`: cut off after the headers). */
function tryLine(t: { status?: number | null; error?: string | null }): string {
  return [t.status, t.error].filter((x) => x != null && x !== '').join(' ') || '?';
}

type AttemptJson = RunRecord['nodes'][number]['attempts'][number];

/** `(stop, native SAFETY)`: the finish reason, and the upstream model's own when it says something else (it can decide the outcome) */
function finishText(a: AttemptJson): string {
  // OpenRouter over Gemini says `stop` and `STOP`: only a native value that says something else is worth the space
  const native = a.nativeFinishReason && a.nativeFinishReason.toLowerCase() !== a.finishReason?.toLowerCase() ? `native ${a.nativeFinishReason}` : null;
  const parts = [a.finishReason, native].filter((x) => x != null && x !== '');
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** `answer 2/4 · chain 1`: which of the model's `retries + 1` answers, and the model's place in the chain (0: the agent's model) */
function answerText(a: AttemptJson, limit: number | undefined): string {
  const answer = a.error?.kind === 'not_sent' ? 'not sent, no answer' : `answer ${a.answerNo}${limit ? `/${limit}` : ''}`;
  return `${answer} · chain ${a.chainIndex}`;
}

/** what a try streamed before its connection broke; the text itself is in `--json` (transport[].discardedText) */
function droppedText(t: AttemptJson['transport'][number]): string {
  return t.discardedText ? ` (dropped ${Array.from(t.discardedText).length} chars of streamed text)` : '';
}

export function formatRun(r: RunRecord): string {
  const out: string[] = [];
  // unfinished: running, or queued (no worker has taken it yet)
  const dur = r.finishedAt ? `${Date.parse(r.finishedAt) - Date.parse(r.startedAt)}ms` : r.status === 'queued' ? 'waiting for a worker' : r.status === 'running' ? 'running' : '-';
  // usage unknown, never zero (DESIGN: Transport retry and rate limits): the totals are a lower bound
  const count = (f: (a: AttemptJson) => boolean) => r.nodes.reduce((k, n) => k + n.attempts.filter(f).length, 0);
  const plural = (k: number, what: string) => `${k} attempt${k === 1 ? '' : 's'} ${what}`;
  const without = count((a) => a.usageUnknown);
  const unpriced = count((a) => a.costSource === 'none');
  const atLeast = r.usageUnknown || unpriced ? '≥ ' : '';
  const notes = [without ? plural(without, 'without usage') : null, unpriced ? plural(unpriced, 'without a price') : null].filter((x) => x !== null);
  const unknown = notes.length ? ` (${notes.join(', ')})` : '';
  out.push(`run ${r.id}  flow ${r.flow}  ${r.status.toUpperCase()}  ${dur}  tokens ${atLeast}${tokens(r.usage)}  cost ${atLeast}${usd(r.usage.costUsd)}${unknown}`);
  // who started it and the project version (the hash's first 12 characters; `--json` has it whole)
  const origin = originLine(r);
  const mark = runKindMark(r);
  if (mark) out.push(mark);
  if (origin) out.push(origin);
  for (const n of r.nodes) {
    const err = n.error ? `  ${n.error.code}` : '';
    out.push(`  ${n.turn ? `turn ${n.turn}` : 'never ran'}  ${n.id} (${n.agent})  ${n.status}${err}`);
    for (const a of n.attempts) {
      const tries = a.transport.map((t) => tryLine(t) + (t.retryAfterMs != null ? ` retry-after ${t.retryAfterMs}ms` : '') + droppedText(t)).join(', ');
      const detail = a.error && a.error.kind !== a.cause ? `  [${a.error.kind}: ${printable(a.error.message)}]` : '';
      out.push(
        `    #${a.seq} ${a.model}  ${a.outcome ?? 'in flight'}${finishText(a)}${a.finishNote ? `  note: ${printable(a.finishNote)}` : ''}` +
          `${a.cause ? `  cause ${a.cause}` : ''}  action ${a.action ?? '-'}  ${answerText(a, n.budget.models[a.chainIndex]?.limit)}${a.discarded ? '  discarded' : ''}${usageNote(a)}${costNote(a)}` +
          `  ${a.latencyMs ?? '-'}ms  tries: ${tries || '-'}${detail}`,
      );
    }
    // a failed node the run's error does not name (an on_fail route went around it): its message and hint here, or nowhere
    if (n.status === 'failed' && n.error && r.error?.node !== n.id) {
      out.push(`    ${n.error.code}: ${printable(n.error.message)}`);
      if (n.error.hint) out.push(`    hint: ${printable(n.error.hint)}`);
    }
  }
  if (r.error) {
    out.push(`error ${r.error.code}${r.error.node ? ` at node ${r.error.node}` : ''}: ${printable(r.error.message)}`);
    if (r.error.hint) out.push(`hint: ${printable(r.error.hint)}`);
  } else if (r.status === 'succeeded') {
    out.push(`output: ${JSON.stringify(r.output)}`);
  }
  // too long for a terminal: each attempt's request as sent, and the streamed text a try dropped, are in the record
  if (r.nodes.some((n) => n.attempts.length)) {
    const dropped = r.nodes.some((n) => n.attempts.some((a) => a.transport.some((t) => t.discardedText)));
    out.push(`requests as sent${dropped ? ' and dropped streamed text' : ''}: aqven show ${shortRunId(r.id)} --json`);
  }
  // the lines are ours; what is stored in them (ids, names, models, output: JSON keeps C1 and DEL raw) is escaped
  return printable(out.join('\n'), { block: true });
}

/** A line per run: start, short id (what `aqven show` and the dashboard take), full id, flow, status, attempts, cost, where it failed. */
export function formatRunList(items: RunListItem[]): string {
  if (items.length === 0) return 'no runs yet';
  const lines = items
    .map(
      (r) =>
        `${new Date(r.startedAt).toISOString()}  ${shortRunId(r.id).padEnd(8)}  ${r.id}  ${r.flow.padEnd(14)} ${r.status.padEnd(11)} ` +
        `${String(r.attempts).padStart(3)} attempts  ${usd(r.costUsd)}${r.errorCode ? `  ${r.errorCode}@${r.errorNode ?? '-'}` : ''}${r.kind === 'flow' ? '' : `  ${runKindMark(r)}`}`,
    )
    .join('\n');
  return printable(lines, { block: true });
}

/** The line of a node in the progress block, for what just happened to it (one text per fact, for a run in this process and a followed one alike). */
const progressLine = {
  skipped: (node: string, reason: string | null) => `  ${node}  skipped${reason ? ` (${reason})` : ''}`,
  ended: (node: string, status: string, code: string | null, attempts: number) => `  ${node}  ${status}${code ? ` ${code}` : ''}  ${attempts} attempt(s)`,
  attempt: (node: string, seq: number, model: string) => `  ${node}  attempt ${seq}  ${model}  …`,
  failedTry: (node: string, seq: number, t: { tryNo: number; status: number | null; error: string | null; retryAfterMs: number | null }) =>
    `  ${node}  attempt ${seq}  try ${t.tryNo}: ${tryLine(t)}${t.retryAfterMs != null ? `, waiting ${t.retryAfterMs}ms` : ''}`,
  attemptEnd: (node: string, a: { seq: number; model: string; outcome: string | null; cause: string | null; action: string }) =>
    `  ${node}  attempt ${a.seq}  ${a.model}  ${a.outcome ?? 'cut off'}${a.cause ? ` → ${a.action}` : ''}`,
};

/** The stream the progress block is drawn on: a terminal's (its width, when it has one). */
export type ProgressStream = Pick<NodeJS.WriteStream, 'write'> & { columns?: number };

/** Redraws one line per node in place (ANSI cursor movement) while a run is in progress: `aqven run`'s and `aqven show --follow`'s. */
export class LiveProgress {
  private readonly lines = new Map<string, string>();
  private drawn = 0;

  constructor(private readonly stream: ProgressStream) {}

  private set(node: string, text: string) {
    this.lines.set(node, text);
    this.draw();
  }

  private draw() {
    let s = this.drawn ? `\x1b[${this.drawn}A` : '';
    // escaped before it is cut: a provider's text never brings a control code of its own
    for (const line of this.lines.values()) s += `\x1b[2K${printable(line).slice(0, (this.stream.columns || 120) - 1)}\n`;
    this.drawn = this.lines.size;
    this.stream.write(s);
  }

  /** a run of this process (`aqven run`) */
  readonly onProgress = (e: ProgressEvent) => {
    if (e.type === 'node_skipped') this.set(e.node, progressLine.skipped(e.node, e.reason));
    else if (e.type === 'node_end') this.set(e.node, progressLine.ended(e.node, e.result.status, e.result.error?.code ?? null, e.result.attempts.length));
    else if (e.type === 'engine') this.engine(e.node, e.event);
  };

  private engine(node: string, ev: EngineEvent) {
    if (ev.type === 'attempt_start') this.set(node, progressLine.attempt(node, ev.seq, ev.model));
    else if (ev.type === 'try_end' && ev.try.status !== 200) this.set(node, progressLine.failedTry(node, ev.seq, ev.try));
    else if (ev.type === 'attempt_end') this.set(node, progressLine.attemptEnd(node, ev.attempt));
  }

  /** a followed run (`aqven show --follow`: its events, lib/flow/run-events.ts); `attempts` counts each node's */
  private readonly attempts = new Map<string, number>();
  readonly onRunEvent = (e: RunEvent) => {
    if (e.type === 'node.ended') {
      const d = e.data;
      this.set(d.id, d.status === 'skipped' ? progressLine.skipped(d.id, null) : progressLine.ended(d.id, d.status, d.error?.code ?? null, this.attempts.get(d.id) ?? 0));
    } else if (e.type === 'attempt.started') {
      this.attempts.set(e.data.node, (this.attempts.get(e.data.node) ?? 0) + 1);
      this.set(e.data.node, progressLine.attempt(e.data.node, e.data.seq, e.data.model));
    } else if (e.type === 'attempt.try' && e.data.try.status !== 200) this.set(e.data.node, progressLine.failedTry(e.data.node, e.data.seq, e.data.try));
    else if (e.type === 'attempt.ended') this.set(e.data.node, progressLine.attemptEnd(e.data.node, e.data));
  };
}
