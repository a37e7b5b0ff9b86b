// Traces from the commands that run flows (DESIGN: Observability, "Traces"): the real `aqven run` and
// `aqven worker` processes, told where the collector is by OTEL_EXPORTER_OTLP_ENDPOINT alone, send
// their runs' spans before they exit (the batch's own delay is seconds longer than the run); on
// PostgreSQL the traceparent a service sent with POST /api/runs travels with the queued run to the
// worker that runs it.
import { spawn } from 'node:child_process';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '@/db/types';
import { startSimulator, type SimServer } from '@/lib/sim';
import { BIN, ensureCliBuilt } from '../cli/aqven-process';
import { postRun } from '../helpers/api-call';
import { otlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { saveEnv } from '../helpers/saved-env';
import { copyShowcase } from '../helpers/showcase';
import { closeDashboardAndWorker, startWorker, type WorkerProcess } from '../queue/workers';

vi.mock('server-only', () => ({}));
vi.mock('next/headers', () => import('@/test/helpers/next-headers'));
vi.mock('next/cache', () => ({ revalidatePath: () => {} }));

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY']);
let receiver: OtlpReceiver;
let tdb: TestDatabase | undefined;
let sim: SimServer | undefined;
let worker: WorkerProcess | undefined;

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

beforeAll(async () => {
  ensureCliBuilt();
  receiver = await otlpReceiver();
  // the processes started here inherit it; the batch waits longer than any run here takes
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '60000';
}, 120_000);

afterAll(async () => {
  if (tdb) await closeDashboardAndWorker({ worker, sim, tdb, restoreEnv });
  else restoreEnv();
  await receiver?.close();
}, 60_000);

/** The real bin, not waited on synchronously: the collector in this process must answer its exports. */
function aqvenProcess(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined, AQVEN_DATABASE_URL: undefined, ...env } });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

describe('the commands that run flows send their spans', () => {
  it('aqven run: the run, its nodes, attempts and tries arrive before the process exits; the printed record names the trace', async () => {
    const dir = copyShowcase();
    const res = await aqvenProcess(['run', 'triage', '--simulate', '--json', '--project', dir, '--input', '{"ticket":"my invoice is wrong"}'], {});
    expect(res.code, res.err).toBe(0);
    const record = JSON.parse(res.out) as { id: string; traceId?: string };
    expect(record.traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = receiver.spans().filter((s) => s.traceId === record.traceId);
    const run = spans.find((s) => s.parentSpanId === '');
    expect(run).toMatchObject({ name: 'invoke_workflow triage', attributes: { 'aqven.run.id': record.id }, resource: { 'service.name': 'aqven' } });
    expect(spans.filter((s) => s.name.startsWith('invoke_agent '))).toHaveLength(2);
    expect(spans.filter((s) => s.name.startsWith('chat ')).length).toBeGreaterThanOrEqual(2);
    expect(spans.filter((s) => s.name === 'POST').length).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it("PostgreSQL: the traceparent of POST /api/runs is stored with the queued run, and the worker's run continues it; the worker sends its spans as SIGTERM stops it", async () => {
    tdb = await testDatabase({ migrated: true });
    sim = await startSimulator({});
    const dir = copyShowcase();
    process.env.AQVEN_PROJECT = dir;
    process.env.AQVEN_SIMULATE = '1';
    process.env.AQVEN_DATABASE_URL = tdb.url;
    // the dashboard in this process queues the run (it traces nothing itself: no tracer started here)
    const db: Db = (await (await import('@/lib/server/session')).serverSession()).db;
    worker = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 1, drainTimeout: 1 });

    const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
    const res = await postRun<{ id: string; status: string; traceId?: string; snapshotId: number | null }>(
      { flow: 'triage', input: { ticket: 'my invoice is wrong' } },
      { traceparent, prefer: 'wait=30' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'succeeded', traceId: CALLER_TRACE });
    expect(res.body.snapshotId).toBeGreaterThan(0); // run by the worker, from the queue
    const [row] = await db.q.select({ traceId: db.t.runs.traceId, traceparent: db.t.runs.traceparent }).from(db.t.runs).where(eq(db.t.runs.id, res.body.id));
    expect(row).toEqual({ traceId: CALLER_TRACE, traceparent });
    // nothing sent yet: the batch waits a minute, and the worker runs on
    expect(receiver.spans().filter((s) => s.traceId === CALLER_TRACE)).toEqual([]);

    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    const spans = receiver.spans().filter((s) => s.traceId === CALLER_TRACE);
    const run = spans.find((s) => s.name === 'invoke_workflow triage');
    expect(run).toMatchObject({ parentSpanId: CALLER_SPAN, attributes: { 'aqven.run.id': res.body.id, 'aqven.run.status': 'succeeded' } });
    expect(spans.filter((s) => s.parentSpanId === run!.spanId).map((s) => s.name)).toEqual(expect.arrayContaining(['invoke_agent classifier', 'invoke_agent writer']));
    worker = undefined;
  }, 120_000);
});
