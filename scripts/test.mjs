// `npm test`: the static checks (static-checks.mjs), then vitest's unit and integration projects
// while the dashboard's production build for the browser tests is made beside them (e2e/build.mjs:
// vitest waits on processes, databases and sockets and leaves a core idle for much of its time),
// then Playwright, which finds the build made. Stops at the first step that fails; the build's own
// output is held and printed after vitest's, so the two never interleave. Its last line is the
// runner's summary line: Playwright's when all ran, else the step that failed.
import { startStep } from './child-step.mjs';

/** the steps still running, stopped when `npm test` ends early */
const running = new Set();
function run(cmd, args, o) {
  const started = startStep(cmd, args, o);
  running.add(started);
  return started.done.finally(() => running.delete(started));
}

/** Ends `npm test` with `code`, stopping a step still running (the build, when vitest failed). */
function exit(code) {
  for (const step of running) step.stop();
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => exit(1));

const step = async (pending) => {
  const { code } = await pending;
  if (code !== 0) exit(code);
};

await step(run(process.execPath, ['scripts/static-checks.mjs']));

const build = process.env.E2E_SKIP_BUILD ? null : run(process.execPath, ['e2e/build.mjs'], { hold: true, group: true });
await step(run('npm', ['run', '-s', 'test:unit']));
if (build !== null) {
  const { code, text, ms } = await build;
  const lines = text.trimEnd().split('\n');
  // the build's whole output when it failed, else its last lines (what it built, or that it was up to date)
  process.stdout.write(`── e2e build: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${(ms / 1000).toFixed(1)} s, beside vitest\n`);
  process.stdout.write(`${(code === 0 ? lines.slice(-3) : lines).join('\n')}\n`);
  if (code !== 0) exit(code);
}

await step(run('npm', ['run', '-s', 'test:e2e']));
