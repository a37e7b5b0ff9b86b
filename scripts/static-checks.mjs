// `npm run static` (the first step of `npm test`): typecheck, lint, format check and layers at once,
// each an npm script of package.json. Each one's output is held and printed whole, in that order,
// under a line naming it, its status and its time, so the four never interleave; the exit status is
// 1 when any failed (all four run to the end either way, so one run lists every problem).
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check', 'layers'];

/** Runs `npm run -s NAME`; resolves with its status, its stdout and stderr together, and its time. */
function run(name) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (text += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (text += d));
    child.on('error', (err) => resolve({ name, code: 1, text: `${text}${err.message}\n`, ms: performance.now() - started }));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), text, ms: performance.now() - started }));
  });
}

const started = performance.now();
const results = CHECKS.map(run);
let failed = 0;
// printed in the order above as soon as each and those before it are done
for (const pending of results) {
  const { name, code, text, ms } = await pending;
  if (code !== 0) failed++;
  process.stdout.write(`── ${name}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${(ms / 1000).toFixed(1)} s\n`);
  if (text.trim() !== '') process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
const total = `${CHECKS.length} checks in ${((performance.now() - started) / 1000).toFixed(1)} s`;
process.stdout.write(failed === 0 ? `── static checks: all ok (${total})\n` : `── static checks: ${failed} FAILED (${total})\n`);
process.exit(failed === 0 ? 0 : 1);
