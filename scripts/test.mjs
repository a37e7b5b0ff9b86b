// `npm test`: the static checks (static-checks.mjs), then vitest's unit and integration projects
// while the dashboard's production build for the browser tests is made beside them (e2e/build.mjs:
// vitest waits on processes, databases and sockets and leaves a core idle for much of its time),
// then Playwright, which finds the build made. Stops at the first step that fails; the build's own
// output is held and printed after vitest's, so the two never interleave. Its last line is the
// runner's summary line: Playwright's when all ran, else the step that failed.
import { spawn } from 'node:child_process';

const children = new Set();
/** Runs a command; resolves with its exit status, and its output when `hold` (else printed as it comes). */
function run(cmd, args, { hold = false } = {}) {
  const started = performance.now();
  return new Promise((resolve) => {
    // its own process group, so a step stopped early is stopped with its children (npx → next build)
    const child = spawn(cmd, args, { stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached: hold });
    children.add(child);
    child.on('close', () => children.delete(child));
    let text = '';
    if (hold) {
      child.stdout.setEncoding('utf8').on('data', (d) => (text += d));
      child.stderr.setEncoding('utf8').on('data', (d) => (text += d));
    }
    child.on('error', (err) => resolve({ code: 1, text: `${text}${cmd}: ${err.message}\n`, s: 0 }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), text, s: (performance.now() - started) / 1000 }));
  });
}

/** Ends `npm test` with `code`, stopping a step still running (the build, when vitest failed). */
function exit(code) {
  for (const child of children) {
    try {
      // the held build leads a process group of its own; the others share ours
      if (child.spawnargs.includes('e2e/build.mjs')) process.kill(-child.pid, 'SIGTERM');
      else child.kill('SIGTERM');
    } catch {
      // already gone
    }
  }
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => exit(1));

const step = async (pending) => {
  const { code } = await pending;
  if (code !== 0) exit(code);
};

await step(run(process.execPath, ['scripts/static-checks.mjs']));

const build = process.env.E2E_SKIP_BUILD ? null : run(process.execPath, ['e2e/build.mjs'], { hold: true });
await step(run('npm', ['run', '-s', 'test:unit']));
if (build !== null) {
  const { code, text, s } = await build;
  const lines = text.trimEnd().split('\n');
  // the build's whole output when it failed, else its last lines (what it built, or that it was up to date)
  process.stdout.write(`── e2e build: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${s.toFixed(1)} s, beside vitest\n`);
  process.stdout.write(`${(code === 0 ? lines.slice(-3) : lines).join('\n')}\n`);
  if (code !== 0) exit(code);
}

await step(run('npm', ['run', '-s', 'test:e2e']));
