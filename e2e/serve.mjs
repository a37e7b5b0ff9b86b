// Builds the dashboard when its sources changed since the build serve.mjs last made (build-stamp.mjs;
// E2E_SKIP_BUILD=1 serves whatever `.next` holds), then serves it on a fresh copy of the showcase
// project with simulated providers, so browser tests never touch a developer's own database.
// playwright.config.ts starts one per worker: `node e2e/serve.mjs PORT FOLDER`.
import { spawnSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isBuiltFrom, sourceHash, stampBuild } from './build-stamp.mjs';

const port = process.argv[2] ?? '3311';
// a given folder (argv[3]) is made afresh, so specs know where the project lives
const project = process.argv[3] ? resolve(process.argv[3]) : mkdtempSync(join(tmpdir(), 'aqven-e2e-'));
if (process.argv[3]) rmSync(project, { recursive: true, force: true });
cpSync('showcase', project, { recursive: true, filter: (src) => !src.includes('.aqven') });
const env = {
  ...process.env,
  AQVEN_PROJECT: project,
  AQVEN_SIMULATE: '1',
  AQVEN_ROOT: process.cwd(),
  NEXT_TELEMETRY_DISABLED: '1',
  AQVEN_RUNS_PER_MINUTE: process.env.E2E_RUNS_PER_MINUTE ?? '40',
};
if (!process.env.E2E_SKIP_BUILD) {
  const root = process.cwd();
  const hash = sourceHash(root);
  if (isBuiltFrom(root, hash)) {
    console.log('e2e: .next is a build of these sources: not building again');
  } else {
    // without Next.js's own type check (next.config.ts): npm test has run `tsc --noEmit` first
    const b = spawnSync('npx', ['next', 'build'], { stdio: 'inherit', env: { ...env, AQVEN_NEXT_NO_TYPECHECK: '1' } });
    if (b.status !== 0) process.exit(b.status ?? 1);
    stampBuild(root, hash);
  }
}
// served as every documented start serves it: `aqven serve` (the peer stamped from the socket, so
// loopback is known, never guessed from a Host header); it keeps idle connections 2 min, so a test's
// request context reusing one after a pause does not race the server's close (ECONNRESET)
const child = spawn(process.execPath, ['bin/aqven.mjs', 'serve', '--host', '127.0.0.1', '--port', port, '--project', project, '--simulate'], { stdio: 'inherit', env });
const stop = () => {
  child.kill('SIGTERM');
  rmSync(project, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
child.on('exit', (code) => process.exit(code ?? 0));
