// The facts of one single-node run as the engine hands them to the run store (insertRun,
// insertNode, startAttempt, sendTry where the tree has the write-ahead, finishAttempt, finishNode,
// finishRun; one of every `1 / invalid` runs has a first answer off-schema, then repaired): the
// fact mix of a recorded run without engine or HTTP, for bench/record-probe.ts --store and
// bench/writer-thread-probe.ts. `between` runs where the engine would do its own work (the
// writer-thread probe spends the engine's CPU there); `newId` makes the ids (time-ordered UUID v7,
// as the product makes them).
import type { RunStore } from '@/db/run-store';
import type { SqliteDb } from '@/db/types';

const MODEL = 'openrouter:openai/gpt-oss-20b';
const REQUEST = [{ role: 'user' as const, content: 'Sort: I was charged twice' }];
const output = { queue: 'billing' };
const usage = { inputTokens: 420, outputTokens: 12, costUsd: 0.0000532 };
const input = { ticket: 'I was charged twice for my subscription renewal in March' };

export interface RunFactsOptions {
  newId: () => string;
  /** the share of runs whose first answer fails the output schema (then repaired) */
  invalid: number;
  /** the engine's work at a point of the run: before the run, before a request, after its answer */
  between?: (at: 'run' | 'request' | 'answer') => void | Promise<void>;
}

/** A feeder of single-node runs into `store`: call it once per run (`n`: the run's number). */
export function runFacts(store: RunStore, o: RunFactsOptions) {
  const { newId, invalid, between } = o;
  return async (n: number) => {
    const runId = newId();
    const node = newId();
    await between?.('run');
    const t = Date.now();
    await store.insertRun({ id: runId, project: 'probe', flow: 'one', input, startedAt: t });
    store.insertNode({ id: node, runId, nodeId: 'classify', agent: 'sorter', turn: 1, ord: 0, status: 'running', policy: null, startedAt: t });
    const answers = invalid > 0 && n % Math.round(1 / invalid) === 0 ? 2 : 1;
    for (let k = 1; k <= answers; k++) {
      const id = newId();
      const bad = k < answers;
      store.startAttempt({ id, nodeRunId: node, runId, seq: k, model: MODEL, chainIndex: 0, answerNo: k, request: REQUEST, startedAt: t });
      // write-ahead (issue 30): the try about to be sent is committed before it leaves, in a tree that has it
      await (store as { sendTry?: (attemptId: string, tryNo: number, at: number) => Promise<void> }).sendTry?.(id, 1, t);
      await between?.('request');
      await between?.('answer');
      await store.finishAttempt(id, {
        seq: k,
        model: MODEL,
        chainIndex: 0,
        answerNo: k,
        outcome: 'ok',
        finishReason: 'stop',
        cause: bad ? 'invalid_output' : null,
        action: bad ? 'repair' : 'none',
        request: REQUEST,
        responseText: bad ? '{"queue":"x"}' : '{"queue":"billing"}',
        error: bad
          ? {
              kind: 'invalid_output',
              message: "openrouter:openai/gpt-oss-20b's answer does not match the node's output schema: /queue must be equal to one of the allowed values",
              detail: '{"queue":"x"}',
            }
          : null,
        validationErrors: bad ? [{ pointer: '/queue', message: 'must be equal to one of the allowed values' }] : [],
        discarded: bad,
        streamedText: null,
        usage,
        startedAt: t,
        finishedAt: t + 1,
        tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: t, finishedAt: t + 1 }],
      });
    }
    store.finishNode({ id: node, status: 'succeeded', output, error: null, usage, finishedAt: t + 2 });
    await store.finishRun({ id: runId, status: 'succeeded', output, error: null, turns: 1, usage, finishedAt: t + 3 });
  };
}

/** Counts the commits of `db`'s run store from now on (it commits with `transaction(drain).immediate()` on the connection); `count` may be reset. */
export function countCommits(db: SqliteDb): { count: number } {
  const counter = { count: 0 };
  const c = db.$client as unknown as { transaction: (fn: (...a: unknown[]) => unknown) => { immediate: (...a: unknown[]) => unknown } };
  const orig = c.transaction.bind(c);
  c.transaction = (fn) => {
    const tx = orig(fn);
    return Object.assign((...a: unknown[]) => (tx as unknown as (...b: unknown[]) => unknown)(...a), {
      ...tx,
      immediate: (...a: unknown[]) => (counter.count++, tx.immediate(...a)),
    });
  };
  return counter;
}
