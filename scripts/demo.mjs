// `npm run demo`: the showcase with simulated providers (no key needed). Seeds a few runs through
// the CLI so the dashboard has history, builds the dashboard, then serves it on loopback with
// `aqven serve --simulate` (port $PORT, default 3000).
import { spawnSync, spawn } from 'node:child_process';

const env = { ...process.env, AQVEN_PROJECT: process.env.AQVEN_PROJECT ?? 'showcase', AQVEN_SIMULATE: '1', NEXT_TELEMETRY_DISABLED: '1' };
const port = process.env.PORT ?? '3000';
const run = (args) => spawnSync(process.execPath, ['bin/aqven.mjs', ...args], { stdio: 'inherit', env });

if (run(['check']).status !== 0) process.exit(1);
const seeds = [
  ['triage', { ticket: 'I was charged twice for my subscription this month.' }],
  ['triage', { ticket: 'The export button crashes the app on Safari.' }],
  ['long-answer', { question: 'How should a small team roll out feature flags?' }],
];
for (const [flow, input] of seeds) run(['run', flow, '--simulate', '--input', JSON.stringify(input)]);

const build = spawnSync('npx', ['next', 'build'], { stdio: 'inherit', env });
if (build.status !== 0) process.exit(build.status ?? 1);
// the server prints its URL once it listens
const server = spawn(process.execPath, ['bin/aqven.mjs', 'serve', '--simulate', '--port', port], { stdio: 'inherit', env });
// Ctrl+C reaches the server from the terminal itself (one process group); a SIGTERM sent to this
// script alone is passed on. Either way the server records its runs and this script exits with it.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => server.kill('SIGTERM'));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
