// What one hop to a worker thread costs the main thread (docs/measurements.md, "The same writer
// thread in W4"): a message carrying an attempt's statements as bench/writer-thread-store.ts posts
// them, answered by the worker — in a burst, as ping-pong, and with both threads asleep between
// messages (a 1 ms timer apart; the timer alone is printed too), and the structured clone alone.
// Main-thread CPU from /proc schedstat, µs per message. Linux only.
//
//   npx tsx bench/worker-hop-probe.ts
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
const mainNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
const w = new Worker(`const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m.id));`, { eval: true });
const row = {
  id: '0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000',
  nodeRunId: '0190aaaa-bbbb-7ccc-8ddd-eeeeffff0001',
  runId: '0190aaaa-bbbb-7ccc-8ddd-eeeeffff0002',
  seq: 1,
  model: 'openrouter:openai/gpt-oss-20b',
  chainIndex: 0,
  answerNo: 1,
  request: [{ role: 'user', content: 'Sort: I was charged twice' }],
  startedAt: Date.now(),
  outcome: 'ok',
  finishReason: 'stop',
  nativeFinishReason: null,
  finishNote: null,
  cause: null,
  action: 'none',
  responseText: '{"queue":"billing"}',
  errorKind: null,
  errorMessage: null,
  errorDetail: null,
  validationErrors: [],
  discarded: false,
  streamedText: null,
  inputTokens: 420,
  outputTokens: 12,
  costUsd: 0.0000532,
  usageUnknown: false,
  reasoningTokens: null,
  costSource: null,
  finishedAt: Date.now(),
  failureSig: null,
};
const batch = () => [
  4,
  row.runId,
  { ...row },
  12,
  row.runId,
  {
    attemptId: row.id,
    tryNo: 1,
    status: 200,
    error: null,
    retryAfterMs: null,
    waitedMs: 0,
    discardedText: null,
    startedAt: 1,
    finishedAt: 2,
    generationId: null,
    usageLookup: null,
    lookupAfter: null,
  },
];
const n = 5000;
let id = 0;
const waiting = new Map<number, () => void>();
w.on('message', (i: number) => {
  waiting.get(i)?.();
  waiting.delete(i);
});
const send = () =>
  new Promise<void>((res) => {
    const i = ++id;
    waiting.set(i, res);
    w.postMessage({ id: i, batch: batch() });
  });
// ping-pong to an idle worker, with the event loop idle between (a timer gap): each message wakes both threads
async function pingPong(gapMs: number) {
  const c0 = mainNs();
  for (let i = 0; i < n / 5; i++) {
    await send();
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
  }
  return (mainNs() - c0) / 1e3 / (n / 5);
}
// a burst: n messages posted, then all replies
async function burst() {
  const c0 = mainNs();
  await Promise.all(Array.from({ length: n }, () => send()));
  return (mainNs() - c0) / 1e3 / n;
}
// serialisation alone
function cloneOnly() {
  const c0 = mainNs();
  for (let i = 0; i < n; i++) structuredClone({ id: i, batch: batch() });
  return (mainNs() - c0) / 1e3 / n;
}
async function idleOnly(gapMs: number) {
  const c0 = mainNs();
  for (let i = 0; i < n / 5; i++) await new Promise((r) => setTimeout(r, gapMs));
  return (mainNs() - c0) / 1e3 / (n / 5);
}
for (let r = 0; r < 3; r++) console.log(JSON.stringify({ timerAloneUs: +(await idleOnly(1)).toFixed(1) }));
for (let r = 0; r < 3; r++)
  console.log(
    JSON.stringify({
      cloneOnlyUs: +cloneOnly().toFixed(1),
      burstUsPerMsg: +(await burst()).toFixed(1),
      pingPongUs: +(await pingPong(0)).toFixed(1),
      pingPongIdleUs: +(await pingPong(1)).toFixed(1),
    }),
  );
await w.terminate();
