// Builds the dashboard when its sources changed since the last build (build.mjs; E2E_SKIP_BUILD=1
// serves whatever `.next` holds), then serves it on a fresh copy of the showcase project with
// simulated providers answering at once, so browser tests never touch a developer's own database.
// playwright.config.ts starts one per worker: `node e2e/serve.mjs PORT FOLDER`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { copyShowcaseTo } from '../test/helpers/showcase-copy.mjs';
import { buildUnlessBuilt } from './build.mjs';

const port = process.argv[2] ?? '3311';
// a given folder (argv[3]) is made afresh, so specs know where the project lives
const project = process.argv[3] ? resolve(process.argv[3]) : mkdtempSync(join(tmpdir(), 'aqven-e2e-'));
if (process.argv[3]) rmSync(project, { recursive: true, force: true });
// its simulator answers at once: a spec about time scripts its own latency or retry-after
copyShowcaseTo(project);
const env = {
  ...process.env,
  AQVEN_PROJECT: project,
  AQVEN_SIMULATE: '1',
  AQVEN_ROOT: process.cwd(),
  NEXT_TELEMETRY_DISABLED: '1',
  AQVEN_RUNS_PER_MINUTE: process.env.E2E_RUNS_PER_MINUTE ?? '40',
};
if (!process.env.E2E_SKIP_BUILD) {
  const status = await buildUnlessBuilt();
  if (status !== 0) process.exit(status);
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
