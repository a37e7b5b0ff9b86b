// The write-ahead crash test (DESIGN: Storage, "Write-ahead"), shared by its short version in
// `npm test` and its long one in `npm run test:load`: rounds of triage runs, each round started by
// a child process (test/fixtures/write-ahead-child.ts) that is SIGKILLed at a random point, its
// runs then taken over by this process (as a worker would, once their leases expired) and run to
// their end. One simulator in this process plays every request, under heavy chaos, so it sees what
// the dead child sent. Afterwards, per run: every request the simulator received is a recorded try
// (a try in flight at the kill may be recorded cut off, and only such a try has no request), no
// attempt is left open, and per node and model the answers counted — a cut-off one among them —
// are each answer once, within `retries + 1`.
import { spawn } from 'node:child_process';
import { eq, inArray } from 'drizzle-orm';
import { LEASE_TTL_MS } from '@/db/run-lease';
import type { Db } from '@/db/types';
import { takeOverRun } from '@/lib/flow/resume';
import { routeToSimulator } from '@/lib/flow/simulate';
import { getRunRecord } from '@/lib/flow/stored-run';
import { loadProject } from '@/lib/project';
import { startSimulator } from '@/lib/sim';
import { mulberry32 } from '@/lib/sim/chaos';
import { openTestDb, type Dialect } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';

const CHAOS = { rate_limit: 0.1, server_error: 0.1, drop: 0.05, provider_error: 0.05, refusal: 0.02, truncated: 0.05, invalid: 0.15 };
const TICKET = /ticket (\d+):/;

/** Starts a child running runs [first, first + count) and SIGKILLs it `killAfterMs` after they all started. */
async function killedChild(o: { dir: string; target: string; simUrl: string; first: number; count: number; killAfterMs: number }): Promise<void> {
  const args = ['--import', 'tsx', 'test/fixtures/write-ahead-child.ts', o.dir, o.target, o.simUrl, String(o.first), String(o.count)];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const look = () => (out.includes('started\n') ? resolve() : undefined);
    child.stdout.on('data', look);
    void exited.then(() => reject(new Error(`the child exited before its runs started:\n${err}`)));
  });
  await new Promise((r) => setTimeout(r, o.killAfterMs));
  child.kill('SIGKILL');
  await exited;
}

export interface CrashFigures {
  runs: number;
  requests: number;
  tries: number;
  cutOff: number;
  takenOver: number;
}

/** What went wrong per run (empty: nothing), and the figures. */
export interface CrashResult {
  problems: string[];
  figures: CrashFigures;
}

/**
 * `rounds` children of `perChild` runs each, on a fresh database of `dialect`, each killed at a
 * seeded random point within `maxKillMs` of its runs' start.
 */
export async function crashRounds(dialect: Dialect, o: { rounds: number; perChild: number; seed: number; maxKillMs: number }): Promise<CrashResult> {
  const dir = copyShowcase();
  const { project } = await loadProject(dir, { env: {} });
  if (!project) throw new Error('showcase copy invalid');
  const t = await openTestDb(dialect);
  const sim = await startSimulator({ logLimit: 100_000, chaos: { ...CHAOS, seed: o.seed }, latency: { first_token_ms: 60, tokens_per_s: 400 } });
  // a seeded random: the kill points of a given seed are the same every time
  const random = mulberry32(o.seed);
  const { providers, env } = routeToSimulator(project, sim);
  let takenOver = 0;
  try {
    for (let round = 0; round < o.rounds; round++) {
      await killedChild({ dir, target: t.target, simUrl: sim.url, first: round * o.perChild, count: o.perChild, killAfterMs: Math.round(random() * o.maxKillMs) });
      // the dead child's runs, taken over once their leases expired (the clock a lease's length on)
      const { runs } = t.db.t;
      const open = await t.db.q.select({ id: runs.id, fence: runs.fence }).from(runs).where(eq(runs.status, 'running'));
      const later = Date.now() + LEASE_TTL_MS + 1;
      for (const r of open) {
        const started = await takeOverRun({ db: t.db, runId: r.id, fence: r.fence, project, providers, env, now: later, owner: 'test-take-over' });
        if (!started) throw new Error(`run ${r.id} could not be taken over`);
        await started.done;
        takenOver++;
      }
    }
    const { problems, figures } = await judge(t.db, sim.requests());
    return { problems, figures: { ...figures, takenOver } };
  } finally {
    await sim.close();
    await t.close();
  }
}

type Request = { body: unknown };

/** The invariants, per run: every request a recorded try; no attempt open; each answer counted once, within its model's budget. */
async function judge(db: Db, requests: readonly Request[]): Promise<{ problems: string[]; figures: Omit<CrashFigures, 'takenOver'> }> {
  const { runs, attempts, transportTries } = db.t;
  const rows = await db.q.select({ id: runs.id, status: runs.status, input: runs.input }).from(runs);
  const problems: string[] = [];
  const asked = new Map<number, number>();
  for (const r of requests) {
    const m = TICKET.exec(JSON.stringify(r.body));
    if (m) asked.set(Number(m[1]), (asked.get(Number(m[1])) ?? 0) + 1);
  }
  let tries = 0;
  let cutOff = 0;
  for (const run of rows) {
    const ticket = Number(TICKET.exec(JSON.stringify(run.input))?.[1]);
    const say = (what: string) => problems.push(`run ${run.id} (ticket ${ticket}): ${what}`);
    if (run.status !== 'succeeded' && run.status !== 'failed') say(`ended ${run.status}`);
    const own = await db.q.select({ id: attempts.id, finishedAt: attempts.finishedAt }).from(attempts).where(eq(attempts.runId, run.id));
    if (own.some((a) => a.finishedAt === null)) say('an attempt was left open');
    const ids = own.map((a) => a.id);
    const rec = ids.length
      ? await db.q
          .select({ status: transportTries.status, error: transportTries.error, startedAt: transportTries.startedAt, finishedAt: transportTries.finishedAt })
          .from(transportTries)
          .where(inArray(transportTries.attemptId, ids))
      : [];
    const cut = rec.filter((x) => x.error === 'cut_off').length;
    // a try the gate refused was never sent: no request, no time
    const refused = rec.filter((x) => x.status === null && (x.error === 'rate_limited' || x.error === 'timeout') && x.startedAt === x.finishedAt).length;
    const got = asked.get(ticket) ?? 0;
    tries += rec.length;
    cutOff += cut;
    if (got > rec.length) say(`${got} requests at the simulator, ${rec.length} recorded tries`);
    if (rec.length - cut - refused > got) say(`${rec.length} recorded tries (${cut} cut off, ${refused} refused at the gate), only ${got} requests`);
    const record = (await getRunRecord(db, run.id))!;
    for (const n of record.nodes) {
      n.budget.models.forEach((m, i) => {
        const sent = n.attempts.filter((a) => a.chainIndex === i && a.error?.kind !== 'not_sent');
        const answered = sent.filter((a) => a.outcome !== null || a.transport.at(-1)?.error === 'cut_off');
        if (m.answers !== answered.length) say(`node ${n.id}: ${m.answers} answers counted of ${m.model}, ${answered.length} given`);
        if (answered.length > m.limit) say(`node ${n.id}: ${m.model} answered ${answered.length} times, more than its ${m.limit}`);
        const numbers = answered.map((a) => a.answerNo);
        if (new Set(numbers).size !== numbers.length) say(`node ${n.id}: ${m.model}'s answer numbers repeat (${numbers.join(', ')}): a lost answer was not counted`);
      });
    }
  }
  return { problems, figures: { runs: rows.length, requests: requests.length, tries, cutOff } };
}
