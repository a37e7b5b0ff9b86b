// A worker process for test/gate/two-processes.test.ts (DESIGN: Transport retry and rate limits,
// "One gate across the cluster"): the showcase project, its providers pointed at the test's
// simulator, recording to the test's PostgreSQL database, with this process's own gate
// (defaultRateGate) and cluster listener. Run with tsx; driven by JSON lines on stdin, it answers
// with JSON lines on stdout:
//   → {"run": n}   n triage runs at once (tickets "<name>-1"…, so the simulator's log says who sent what)
//   ← {"event": "pause", "at": ms, "until": ms|null}   the stored pause of the watched model changed here
//   ← {"done": [...statuses]}
//   → {"exit": true}
// Env: GATE_NAME, GATE_DB (postgres URL), GATE_SIM_BASE (the simulator's openrouter base URL),
// GATE_PROJECT (a showcase copy), GATE_MODEL (the model string watched), GATE_LISTEN=0 (poll only),
// GATE_CLAIM_TTL_MS.
import { createInterface } from 'node:readline';
import { closeDb, openDatabase } from '@/db/client';
import { clusterGate } from '@/db/cluster-gate';
import { runFlow } from '@/lib/flow/run-flow';
import { loadProject } from '@/lib/project';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const name = env('GATE_NAME');
const url = env('GATE_DB');
const model = env('GATE_MODEL');
const say = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);

const { project, diagnostics } = await loadProject(env('GATE_PROJECT'), { env: {} });
if (!project) throw new Error(`showcase copy invalid: ${JSON.stringify(diagnostics)}`);
const providers = Object.fromEntries(Object.entries(project.providers).map(([k, p]) => [k, { ...p, baseUrl: env('GATE_SIM_BASE') }]));
const keys: Record<string, string | undefined> = { ...process.env };
for (const p of Object.values(project.providers)) if (p.apiKeyEnv) keys[p.apiKeyEnv] = 'simulated-key';

const db = await openDatabase(url);
if (db.dialect !== 'pg') throw new Error('the fixture runs on PostgreSQL');
const listen = process.env.GATE_LISTEN !== '0';
// made before the run store makes it, so these options count
const gate = clusterGate(db, { listen, claimTtlMs: Number(process.env.GATE_CLAIM_TTL_MS) || undefined });
gate.watch(model, () => say({ event: 'pause', at: Date.now(), until: gate.get(model) }));
await gate.ready();
if (listen) await gate.listening();
say({ ready: true });

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line) as { run?: number; exit?: boolean };
  if (cmd.run) {
    const n = cmd.run;
    void Promise.all(Array.from({ length: n }, (_, i) => runFlow({ project, flow: 'triage', input: { ticket: `${name}-${i + 1}` }, providers, env: keys, db })))
      .then((runs) => say({ done: runs.map((r) => r.status) }))
      .catch((err: unknown) => say({ error: String(err) }));
  }
  if (cmd.exit) {
    await closeDb(url);
    process.exit(0);
  }
}
