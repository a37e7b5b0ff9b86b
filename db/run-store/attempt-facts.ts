// An attempt's facts (DESIGN: Storage): its start, its transport tries and its streamed text are
// written behind; a try about to be sent (write-ahead) and its end (finished, or interrupted) are
// durable points. The first try's commit writes the attempt's row with the try in flight; a later
// try's marks it on the row. An attempt never sent (the gate refused it) is written once, whole, at
// its end (`open` tracks what of each attempt is written). A failed attempt is signed
// (failure_sig), its text made searchable and, in a `flow` run, counted in the daily sums; every
// attempt's cost counts against its run's caller's budget.
import type { AttemptRecord, TryRecord } from '@/lib/engine/types';
import { attemptErrorText, attemptSignature, isFailedAttempt } from '../run-aggregates';
import type { StoreContext } from './context';
import type { NodeInfo, RunInfo } from './feeds';
import type { Statements, ValuesOf } from './statements';
import type { RunStore } from './types';

type StartArgs = Parameters<RunStore['startAttempt']>[0];
/**
 * What of an attempt is written: chunks, the stream_chunks rows queued for it (their seq); chunked,
 * some were written; sending, the try about to be sent (write-ahead) and when; marked, the try the
 * written row names as in flight.
 */
type Open = {
  start: StartArgs;
  written: boolean;
  tries: number;
  done: boolean;
  chunks: number;
  chunked: boolean;
  sending: number | null;
  sendingAt: number | null;
  marked: number | null;
};
type Interrupt = Parameters<RunStore['interruptAttempt']>[1];

/** the attempt's start row, naming the try in flight when it is written (write-ahead) */
const startRow = (st: Open): ValuesOf<Statements['startAttempt']> => {
  const b = st.start;
  st.marked = st.sending;
  return {
    id: b.id,
    nodeRunId: b.nodeRunId,
    runId: b.runId,
    seq: b.seq,
    model: b.model,
    chainIndex: b.chainIndex,
    answerNo: b.answerNo,
    request: b.request,
    startedAt: b.startedAt,
    inFlightTry: st.sending,
    inFlightAt: st.sendingAt,
  };
};

/**
 * An attempt's whole row, its start (`b`) and its end (`a`; `failureSig`: its signature when it
 * failed), as both the insert of a whole attempt and the update of a started one take it: one
 * object literal, no spread (this is the hot path: a spread object is copied property by property).
 */
function attemptRow(b: StartArgs, a: AttemptRecord, request: unknown, failureSig: string | null): ValuesOf<Statements['insertAttempt']> & ValuesOf<Statements['finishAttempt']> {
  const { error: e, usage: u } = a;
  return {
    id: b.id,
    nodeRunId: b.nodeRunId,
    runId: b.runId,
    seq: b.seq,
    model: b.model,
    chainIndex: b.chainIndex,
    answerNo: b.answerNo,
    request,
    startedAt: b.startedAt,
    outcome: a.outcome,
    finishReason: a.finishReason,
    nativeFinishReason: a.nativeFinishReason ?? null,
    finishNote: a.finishNote ?? null,
    cause: a.cause,
    action: a.action,
    responseText: a.responseText,
    errorKind: e?.kind ?? null,
    errorMessage: e?.message ?? null,
    errorDetail: e?.detail ?? null,
    validationErrors: a.validationErrors,
    discarded: a.discarded,
    streamedText: a.streamedText,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    costUsd: u.costUsd,
    usageUnknown: a.usageUnknown ?? false,
    reasoningTokens: a.reasoningTokens ?? null,
    costSource: a.costSource ?? null,
    finishedAt: a.finishedAt,
    failureSig,
    inFlightTry: null,
    inFlightAt: null,
    inFlightGeneration: null,
  };
}

/** a try's row: a cut-off answer with a generation id has its usage looked up later (lib/flow/usage-lookup.ts), due at once */
const tryRow = (attemptId: string, t: TryRecord): ValuesOf<Statements['insertTry']> => ({
  attemptId,
  tryNo: t.tryNo,
  status: t.status,
  error: t.error,
  retryAfterMs: t.retryAfterMs,
  waitedMs: t.waitedMs,
  discardedText: t.discardedText ?? null,
  startedAt: t.startedAt,
  finishedAt: t.finishedAt,
  generationId: t.generationId ?? null,
  usageLookup: t.generationId ? 'pending' : null,
  lookupAfter: t.generationId ? t.finishedAt : null,
});

/** the durable points of an attempt: a try about to be sent, finished, interrupted */
function attemptEnds({ s, feeds, queue }: StoreContext) {
  const { sums, spent } = feeds;
  // write-ahead: with the run's queued facts (its run, node and this attempt's start, earlier tries), committed before the try leaves
  const sendTry = queue.durable<[Open, number, number]>(
    (st) => st.start.runId,
    (st, tryNo, at) => {
      if (st.done || st.marked === tryNo) return; // ended already, or its start row named it
      if (!st.written) {
        s.startAttempt.run(startRow(st)); // its queued start was lost with a failed commit
        st.written = true;
        return;
      }
      s.markInFlight.run({ inFlightTry: tryNo, inFlightAt: at, id: st.start.id });
      st.marked = tryNo;
    },
  );
  const finishAttempt = queue.durable<[Open, AttemptRecord, boolean, NodeInfo | undefined, RunInfo | undefined]>(
    (st) => st.start.runId,
    (st, a, requestChanged, node, run) => {
      const id = st.start.id;
      const failed = isFailedAttempt(a);
      const agent = node?.agent ?? null;
      const sig = failed && agent !== null ? attemptSignature(agent, { model: a.model, cause: a.cause, errorMessage: a.error?.message ?? null }) : null;
      // a written start row holds the request: rewritten only when it changed (undefined keeps it)
      const row = attemptRow(st.start, a, st.written && !requestChanged ? undefined : a.request, sig?.sig ?? null);
      (st.written ? s.finishAttempt : s.insertAttempt).run(row);
      for (const t of a.tries.slice(st.written ? st.tries : 0)) s.insertTry.run(tryRow(id, t));
      // the whole text is in streamed_text now (redacted when discarded)
      if (st.chunked) s.dropChunks.run({ attemptId: id });
      if (failed) {
        const body = attemptErrorText(a.error?.message, a.validationErrors);
        if (body) s.searchDoc.run({ runId: st.start.runId, nodeRunId: st.start.nodeRunId, attemptId: id, field: 'error', body, at: a.finishedAt });
      }
      const u = a.usage;
      spent(run, u.costUsd, a.finishedAt);
      if (agent === null || node!.run.kind !== 'flow') return;
      const { model, outcome, cause, action, startedAt, finishedAt } = a;
      sums.attempt(agent, { model, outcome, cause, action, inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd: u.costUsd, startedAt, finishedAt });
      if (sig) sums.failure({ sig, level: 'attempt', agent, model, code: cause ?? '', costUsd: u.costUsd, at: startedAt });
    },
  );
  const interruptAttempt = queue.durable<[Open, Interrupt, RunInfo | undefined]>(
    (st) => st.start.runId,
    (st, a, run) => {
      if (!st.written) s.startAttempt.run(startRow(st)); // its queued start was lost with a failed commit
      st.written = true;
      // the try in flight when the run was stopped: sent, its answer never read (the provider may have answered)
      if (a.cutTry) s.insertTry.run(tryRow(st.start.id, a.cutTry));
      const { usage: u } = a;
      s.interruptAttempt.run({
        errorMessage: a.message,
        streamedText: a.streamedText,
        usageUnknown: a.usageUnknown,
        finishedAt: a.finishedAt,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        costUsd: u.costUsd,
        id: st.start.id,
      });
      spent(run, u.costUsd, a.finishedAt);
      if (st.chunked) s.dropChunks.run({ attemptId: st.start.id }); // its text is in streamed_text now
      st.done = true;
    },
  );
  return { sendTry, finishAttempt, interruptAttempt };
}

type AttemptMethods = 'startAttempt' | 'sendTry' | 'noteGeneration' | 'appendStreamed' | 'resetStreamed' | 'insertTry' | 'finishAttempt' | 'interruptAttempt';

export function attemptFacts(ctx: StoreContext): Pick<RunStore, AttemptMethods> {
  const { s, feeds, queue } = ctx;
  const { later } = queue;
  const open = new Map<string, Open>();
  const ends = attemptEnds(ctx);
  return {
    startAttempt: (a) => {
      const st: Open = { start: a, written: false, tries: 0, done: false, chunks: 0, chunked: false, sending: null, sendingAt: null, marked: null };
      open.set(a.id, st);
      later(a.runId, () => {
        if (st.done || st.written) return;
        s.startAttempt.run(startRow(st));
        st.written = true;
      });
    },
    sendTry: (id, tryNo, at) => {
      const st = open.get(id);
      if (!st) return Promise.reject(new Error(`attempt ${id} was never started`));
      st.sending = tryNo;
      st.sendingAt = at;
      return ends.sendTry(st, tryNo, at);
    },
    noteGeneration: (id, generationId) => {
      const st = open.get(id);
      later(st?.start.runId ?? null, () => st && !st.done && st.written && s.markGeneration.run({ inFlightGeneration: generationId, id }));
    },
    appendStreamed: (id, text) => {
      const st = open.get(id);
      if (!st) return;
      const seq = st.chunks++;
      later(st.start.runId, () => {
        if (st.done) return;
        s.appendStreamed.run({ attemptId: id, seq, text });
        st.chunked = true;
      });
    },
    resetStreamed: (id) => {
      const st = open.get(id);
      later(st?.start.runId ?? null, () => st && !st.done && st.chunked && s.dropChunks.run({ attemptId: id }));
    },
    insertTry: (id, t) => {
      const st = open.get(id);
      later(st?.start.runId ?? null, () => {
        if (!st || st.done) return;
        s.insertTry.run(tryRow(id, t));
        st.tries++;
      });
    },
    finishAttempt: (id, a, requestChanged = true) => {
      const st = open.get(id);
      if (!st) return Promise.reject(new Error(`attempt ${id} was never started`));
      // from here on the queued start, tries and text of this attempt are written by the finish
      st.done = true;
      open.delete(id);
      return ends.finishAttempt(st, a, requestChanged, feeds.nodeInfo.get(st.start.nodeRunId), feeds.runInfo.get(st.start.runId));
    },
    interruptAttempt: (id, a) => {
      const st = open.get(id);
      if (!st) return Promise.resolve(); // it finished after all
      open.delete(id);
      return ends.interruptAttempt(st, a, feeds.runInfo.get(st.start.runId));
    },
  };
}
