// One step of `npm test` as a child process: scripts/static-checks.mjs runs its four checks with it,
// scripts/test.mjs the steps after them.
import { spawn } from 'node:child_process';

/**
 * Starts `cmd args`. With `hold` its stdout and stderr are kept, together, for the caller to print;
 * else they are the caller's own. With `group` it leads a process group of its own, so stopping it
 * (`stop`) stops its children too (npx → next build). `done` resolves with its exit status (1 when it
 * could not start or a signal ended it), the held text and its time in ms.
 */
export function startStep(cmd, args, { hold = false, group = false } = {}) {
  const started = performance.now();
  const child = spawn(cmd, args, { stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached: group });
  let text = '';
  if (hold) {
    child.stdout.setEncoding('utf8').on('data', (d) => (text += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (text += d));
  }
  const done = new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: 1, text: `${text}${cmd}: ${err.message}\n`, ms: performance.now() - started }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), text, ms: performance.now() - started }));
  });
  const stop = () => {
    try {
      if (group) process.kill(-child.pid, 'SIGTERM');
      else child.kill('SIGTERM');
    } catch {
      // already gone
    }
  };
  return { done, stop };
}
