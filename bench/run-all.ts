// `npm run bench`: every benchmark in one process, results in bench/results/*.json.
import { runCliStartBench } from './cli-start.bench';
import { runEngineBench } from './engine.bench';
import { runRecordingCostBench } from './recording-cost.bench';
import { runRedactBench } from './redact.bench';
import { runRunsBench } from './runs.bench';
import { runScaleBench } from './scale.bench';
import { runScaleOutBench } from './scale-out.bench';
import { runStreamStoreBench } from './stream-store.bench';
import { runPeersBench } from './peers/run';
import { runPgSearchBench } from './pg-search.bench';

const r = runRedactBench();
console.log(`redact: ${r.realistic.mbPerS} MB/s realistic; worst adversarial ${Math.max(...r.adversarial.map((a) => a.ms))} ms`);
const e = await runEngineBench();
console.log(`engine: median overhead per attempt ${e.overheadMedianMs.toFixed(3)} ms (target < ${e.targetMs} ms)`);
const runs = await runRunsBench();
console.log(
  `runs: ${runs.recordedRunsPerSec} runs/s recorded, ${runs.unrecordedRunsPerSec} unrecorded; recording costs ×${runs.recordingCostRatio}; ` +
    `overhead per attempt ${runs.overheadPerAttemptMsRecorded} ms recorded`,
);
const stream = await runStreamStoreBench();
console.log(
  `stream store: ${stream.cases.map((c) => `${c.mb} MB ${c.beforeMs} ms before, ${c.afterMs} ms after (×${c.beforeOverAfter} faster; ×${c.afterOverFloor} one whole write)`).join('; ')}`,
);
const cli = await runCliStartBench();
console.log(
  `cli start: --version ×${cli.version.ratioMedian} bare node (target ≤ ×${cli.version.targetRatio}); ` +
    `first provider request ${cli.firstRequest.medianMs} ms after spawn (p90 ${cli.firstRequest.p90Ms}, target ≤ ${cli.firstRequest.targetMs}); check ${cli.check.medianMs} ms`,
);
const scale = await runScaleOutBench();
console.log(
  `scale-out: ${scale.workers.map((w) => `${w.workers} worker(s) ${w.runsPerSec} runs/s (×${w.ratioToOne})`).join(', ')}; ` +
    `SQLite in one process ${scale.sqliteInProcess.runsPerSec} runs/s; queue latency median ${scale.queueLatency?.medianMs} ms, p95 ${scale.queueLatency?.p95Ms} ms`,
);
// the tree before the feeds to compare with, when one is checked out (bench/recording-cost.bench.ts says how)
const cost = await runRecordingCostBench({ base: process.env.AQVEN_BENCH_BASE });
const costLine = (name: string, m: { now: { recordedRunsPerSec: number; recordedCpuMsPerRun: number }; recordedRunsPerSecRatio?: number; recordedCpuPerRunRatio?: number }) =>
  `${name} ${m.now.recordedRunsPerSec} runs/s, ${m.now.recordedCpuMsPerRun} CPU ms/run` +
  (m.recordedCpuPerRunRatio ? ` (×${m.recordedRunsPerSecRatio} runs/s, ×${m.recordedCpuPerRunRatio} CPU of the tree before)` : '');
console.log(`recording cost: ${(['allValid', 'storeOnly'] as const).map((k) => costLine(k, cost[k] as Parameters<typeof costLine>[1])).join('; ')}`);
const big = await runScaleBench();
console.log(
  `scale (${big.rows.runs.toLocaleString('en')} runs, ${big.rows.attempts.toLocaleString('en')} attempts): ` +
    big.noStatistics.targets.map((t) => `${t.read} p95 ${t.p95} ms (< ${t.targetMs}${t.met ? '' : ' MISSED'})`).join('; '),
);
const pgSearch = await runPgSearchBench();
console.log(`pg search (${pgSearch.docs.toLocaleString('en')} documents): p95 ${pgSearch.target.p95} ms (< ${pgSearch.target.targetMs}${pgSearch.target.met ? '' : ' MISSED'})`);
// AQVEN side by side with ai@6 and openai@6 (bench/peers/): prints its own lines, rewrites the README table
const peers = await runPeersBench();
if (peers.exitCode) process.exitCode = peers.exitCode;
console.log('results in bench/results/');
