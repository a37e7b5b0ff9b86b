// `npm run bench`: every benchmark in one process, results in bench/results/*.json.
import { runCliStartBench } from './cli-start.bench';
import { runEngineBench } from './engine.bench';
import { runRedactBench } from './redact.bench';
import { runRunsBench } from './runs.bench';
import { runScaleOutBench } from './scale-out.bench';
import { runStreamStoreBench } from './stream-store.bench';

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
console.log('results in bench/results/');
