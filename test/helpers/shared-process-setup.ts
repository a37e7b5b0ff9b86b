// A setup file of the integration project (vitest.config.ts, setupFiles), whose files share one
// process per worker (isolate: false): what a test file leaves in the process is undone when it
// ends, each piece by the module that owns it, so that every file starts as in a fresh process,
// whatever ran before it (DESIGN: Tests).
import { afterAll, vi } from 'vitest';
import { resetDefaultRateGateForTests } from '@/lib/engine/rate-gate';
import { interruptAll } from '@/lib/flow/active-runs';
import { forgetProcessMetricsForTests } from '@/lib/observe/process-metrics';
import { forgetProbesForTests } from '@/lib/server/limits-probe';
import { forgetBatchesForTests } from '@/lib/server/replay';
import { closeServerSessionForTests } from '@/lib/server/session';

const env = { ...process.env };

// a setup file's afterAll runs after the test file's own (sequence.hooks: 'stack')
afterAll(async () => {
  // runs still going (one the dashboard started in the background, a probe) record themselves interrupted
  await interruptAll('stopped: the test file ended');
  await closeServerSessionForTests();
  forgetProbesForTests();
  forgetBatchesForTests();
  resetDefaultRateGateForTests();
  forgetProcessMetricsForTests();
  // a file that faked the clock (vi.useFakeTimers) and did not put it back
  vi.useRealTimers();
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
});
