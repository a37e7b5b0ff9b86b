// `npm run static` (the first step of `npm test`): typecheck, lint, format check and layers at once,
// each an npm script of package.json. Each one's output is held and printed whole, in that order,
// under a line naming it, its status and its time, so the four never interleave; the exit status is
// 1 when any failed (all four run to the end either way, so one run lists every problem).
import { startStep } from './child-step.mjs';

const CHECKS = ['typecheck', 'lint', 'format:check', 'layers'];

/** Runs `npm run -s NAME`, its output held; resolves with its name, status, output and time. */
const run = (name) => startStep('npm', ['run', '-s', name], { hold: true }).done.then((r) => ({ name, ...r }));

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
