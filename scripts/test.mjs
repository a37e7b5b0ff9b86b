// `npm test`: the static checks (static-checks.mjs), then vitest's unit and integration projects
// with the browser tests beside them: the dashboard's production build for them first (e2e/build.mjs),
// then Playwright as soon as it is made. vitest waits on processes, databases and sockets and leaves
// most of a core idle for most of its four minutes; the browser tests fill it (466 s -> see
// docs/measurements.md, "Issue 29: the suite"). Stops at the first step that fails. The output never
// interleaves: the build's and Playwright's are held while vitest prints, then the build's last lines,
// then Playwright's held lines and the rest of them as they come. Its last line is the runner's
// summary line: Playwright's when all ran, else the step that failed.
import { startStep } from './child-step.mjs';

/** the steps still running, stopped when `npm test` ends early */
const running = new Set();
function start(cmd, args, o) {
  const started = startStep(cmd, args, o);
  running.add(started);
  started.done.finally(() => running.delete(started));
  return started;
}

/** Ends `npm test` with `code`, stopping the steps still running (the browser tests, when vitest failed). */
function exit(code) {
  for (const step of running) step.stop();
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => exit(1));

const step = async (pending) => {
  const { code } = await pending;
  if (code !== 0) exit(code);
};

await step(start(process.execPath, ['scripts/static-checks.mjs']).done);

const build = process.env.E2E_SKIP_BUILD ? null : start(process.execPath, ['e2e/build.mjs'], { hold: true, group: true });
// Playwright once the build is made; held (and a group of its own, to stop its servers) while vitest prints
const e2e = (build === null ? Promise.resolve({ code: 0 }) : build.done).then(({ code }) =>
  code === 0 ? start('npm', ['run', '-s', 'test:e2e'], { hold: true, group: true }) : null,
);
await step(start('npm', ['run', '-s', 'test:unit']).done);
if (build !== null) {
  const { code, text, ms } = await build.done;
  const lines = text.trimEnd().split('\n');
  // the build's whole output when it failed, else its last lines (what it built, or that it was up to date)
  process.stdout.write(`── e2e build: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${(ms / 1000).toFixed(1)} s, beside vitest\n`);
  process.stdout.write(`${(code === 0 ? lines.slice(-3) : lines).join('\n')}\n`);
  if (code !== 0) exit(code);
}
const browser = await e2e;
process.stdout.write('── browser tests (Playwright), started beside vitest once the build was made:\n');
browser.release();
await step(browser.done);
