// `npm run bench`: every benchmark in one process, results in bench/results/*.json.
import { runEngineBench } from './engine.bench';
import { runRedactBench } from './redact.bench';
import { runRunsBench } from './runs.bench';

const r = runRedactBench();
console.log(`redact: ${r.realistic.mbPerS} MB/s realistic; worst adversarial ${Math.max(...r.adversarial.map((a) => a.ms))} ms`);
const e = await runEngineBench();
console.log(`engine: median overhead per attempt ${e.overheadMedianMs.toFixed(3)} ms (target < ${e.targetMs} ms)`);
const runs = await runRunsBench();
console.log(
  `runs: ${runs.recordedRunsPerSec} runs/s recorded, ${runs.unrecordedRunsPerSec} unrecorded; recording costs ×${runs.recordingCostRatio}; ` +
    `overhead per attempt ${runs.overheadPerAttemptMsRecorded} ms recorded`,
);
console.log('results in bench/results/');
