// Real `aqven worker` processes for the queue's tests: the bin as a user starts it, against the
// test's PostgreSQL database and the test's simulator (AQVEN_SIM_URL), its output collected.
import { spawn, type ChildProcess } from 'node:child_process';
import { inArray } from 'drizzle-orm';
import type { Db } from '@/db/types';
import { BIN } from '../cli/aqven-process';

export interface WorkerProcess {
  child: ChildProcess;
  /** the worker's id (its PROCESS_OWNER, the owner its leases name), once it said it is up */
  id: string;
  /** its log lines (stdout), as written */
  out(): string;
  /** its log lines, parsed (JSON, the default format) */
  lines(): LogLine[];
  err(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A log line of `aqven worker` or `aqven serve` (lib/observe/logger.ts), parsed. */
export type LogLine = { level: string; time: string; msg: string; name: string } & Record<string, unknown>;

/** The JSON log lines in `text` (every line must be one). */
export function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);
}

/** The environment of a worker: the database, the shared simulator, nothing of the test's own. */
export function workerEnv(url: string, simUrl: string | null): NodeJS.ProcessEnv {
  return { ...process.env, AQVEN_DATABASE_URL: url, AQVEN_SIM_URL: simUrl ?? undefined, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined };
}

/** Starts `aqven worker --simulate` and resolves once it is taking jobs. */
export async function startWorker(o: {
  url: string;
  simUrl: string | null;
  project: string;
  concurrency: number;
  drainTimeout?: number;
  env?: Record<string, string | undefined>;
  /** more flags (`--metrics-port 0`) */
  args?: string[];
}): Promise<WorkerProcess> {
  const args = ['worker', '--simulate', '--concurrency', String(o.concurrency), '--project', o.project, ...(o.args ?? [])];
  if (o.drainTimeout !== undefined) args.push('--drain-timeout', String(o.drainTimeout));
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...workerEnv(o.url, o.simUrl), ...o.env } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const id = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start within 60 s:\n${out}\n${err}`)), 60_000);
    // its start line, in either log format
    const look = () => {
      const m = /([0-9a-f-]{36}) on .* waiting for runs/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', look);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exited.then(({ code }) => reject(new Error(`the worker exited (${code}) before it started:\n${out}\n${err}`)));
  });
  return { child, id, out: () => out, lines: () => logLines(out), err: () => err, exited };
}

/** Polls `f` (a read of the database) until it answers truthy; the bound is a hang guard. */
export async function eventually<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 90_000, everyMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** How many runs are not over yet (queued or running). */
export async function unfinished(db: Db): Promise<number> {
  const { runs } = db.t;
  return (
    await db.q
      .select({ id: runs.id })
      .from(runs)
      .where(inArray(runs.status, ['queued', 'running']))
  ).length;
}

/** The lines a worker printed that say a lock or serialization went wrong. */
export function lockTrouble(text: string): string[] {
  return text.split('\n').filter((l) => /deadlock|could not serialize|serialization failure|lock timeout|could not obtain lock|lock not available/i.test(l));
}

/**
 * Ends what a test of the dashboard beside a worker started: the dashboard's session in this
 * process, the worker (SIGTERM, awaited), the simulator and the test database; then the environment.
 */
export async function closeDashboardAndWorker(o: {
  worker?: WorkerProcess;
  sim?: { close(): Promise<void> };
  tdb?: { stop(): Promise<void> };
  restoreEnv: () => void;
}): Promise<void> {
  await (await (await import('@/lib/server/session')).serverSession()).close();
  o.worker?.child.kill('SIGTERM');
  await o.worker?.exited;
  await o.sim?.close();
  await o.tdb?.stop();
  o.restoreEnv();
}
