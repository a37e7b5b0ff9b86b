// Builds (once per source state) and serves the dashboard on a fresh copy of the showcase project
// with simulated providers, so browser tests never touch a developer's own database.
import { spawnSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
  const b = spawnSync('npx', ['next', 'build'], { stdio: 'inherit', env });
  if (b.status !== 0) process.exit(b.status ?? 1);
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
