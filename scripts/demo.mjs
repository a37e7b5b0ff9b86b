// `npm run demo`: the showcase with simulated providers (no key needed). Seeds a few runs through
// the CLI so the dashboard has history, then builds and serves the dashboard on port 3000.
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
console.log(`\nAQVEN dashboard: http://localhost:${port}/runs  (simulated providers)\n`);
const server = spawn('npx', ['next', 'start', '-p', port], { stdio: 'inherit', env });
server.on('exit', (code) => process.exit(code ?? 0));
