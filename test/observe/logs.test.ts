// The structured logs (DESIGN: Observability, "Logs") of real runs against the simulator: in this
// process through the logger `aqven serve` and `aqven worker` start (lib/observe/logs.ts), then
// the real `aqven worker` bin, JSON by default and human lines with AQVEN_LOG_FORMAT=pretty. A key
// in a provider's error and an email in a failure message never reach the log stream.
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { startLogs, type ProcessLogs } from '@/lib/observe/logs';
import { startSimulator, type SimServer } from '@/lib/sim';
import { aqvenHere, ensureCliBuilt } from '../cli/aqven-process';
import { testDatabase, type TestDatabase } from '../helpers/pg-cluster';
import { copyShowcase, FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';
import { eventually, logLines, startWorker, type LogLine } from '../queue/workers';

const KEY = 'sk-or-v1-logs-test-key-5c9e1a7b3d';
const EMAIL = 'anna@example.com';
const ticket = { ticket: 'I was charged twice this month.' };

describe('the run lines of a real run, in this process', () => {
  let w: World | null = null;
  let logs: ProcessLogs | null = null;
  afterEach(async () => {
    logs?.stop();
    logs = null;
    await w?.close();
    w = null;
  });

  it('a rate limit, a fallback after an error quoting the key and an email, a node refused: every line parses, with its run, node, model and trace id; no secret', async () => {
    const written: string[] = [];
    // the key is this logger's environment, not the test process's: the engine (which scrubs the
    // process's) stores it as the provider sent it, and only the log's own scrubbing keeps it out
    logs = startLogs({ name: 'aqven worker', env: { OPENROUTER_API_KEY: KEY }, write: (l) => written.push(l) });
    w = await world({
      [FLASH_LITE]: [
        { kind: 'status', status: 429, headers: { 'retry-after-ms': '100' } },
        { kind: 'provider_error', message: `Key ${KEY} may not call this model; write to ${EMAIL}` },
        { kind: 'ok' },
      ],
      [GPT_OSS]: [{ kind: 'ok' }, { kind: 'ok' }, { kind: 'refusal', text: `I will not write to ${EMAIL}.` }],
    });
    const first = await w.run('triage', ticket);
    expect(first.status).toBe('succeeded');
    const second = await w.run('triage', ticket);
    expect(second.status).toBe('failed');

    const all = written.join('');
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(EMAIL);
    const lines = logLines(all);
    for (const l of lines) expect(l).toMatchObject({ name: 'aqven worker', traceId: null, runId: expect.stringMatching(/^(?:\S+)$/) });
    const of = (id: string) => lines.filter((l) => l.runId === id);

    const one = of(first.id);
    expect(one[0]).toMatchObject({ level: 'info', msg: `run ${first.id} triage started`, flow: 'triage', kind: 'flow', resumed: false });
    expect(one.find((l) => l.pauseMs !== undefined)).toMatchObject({
      level: 'warn',
      node: 'classify',
      model: `openrouter:${FLASH_LITE}`,
      reason: `HTTP 429 from openrouter:${FLASH_LITE}`,
    });
    const fellBack = one.find((l) => l.action === 'fallback');
    expect(fellBack).toMatchObject({ level: 'info', node: 'classify', model: `openrouter:${FLASH_LITE}`, outcome: 'error', cause: 'provider_error', errorKind: 'provider_error' });
    // the failure text is there, redacted
    expect(fellBack!.error).toContain('<REDACTED>');
    expect(fellBack!.error).toContain('<EMAIL>');
    const end = one.at(-1)!;
    expect(end).toMatchObject({ level: 'info', status: 'succeeded', attempts: first.nodes.reduce((n, x) => n + x.attempts.length, 0), usage: first.usage, error: null });
    expect(end.msg).toMatch(new RegExp(`^run ${first.id} triage succeeded: \\d+ attempts, \\S+ m?s, \\$`));

    const two = of(second.id);
    expect(two.find((l) => l.code === 'refusal')).toMatchObject({
      level: 'warn',
      node: 'draft',
      model: `openrouter:${GPT_OSS}`,
      msg: `draft failed: refusal (last model openrouter:${GPT_OSS})`,
    });
    expect(two.at(-1)).toMatchObject({ level: 'warn', status: 'failed', error: { code: 'refusal', node: 'draft' } });
    expect(String((two.at(-1)!.error as { message: string }).message)).not.toContain(EMAIL);
  });
});

describe('aqven worker logs', () => {
  let tdb: TestDatabase;
  let db: Db;
  let sim: SimServer;
  let dir: string;

  beforeAll(async () => {
    ensureCliBuilt();
    tdb = await testDatabase({ migrated: true });
    db = await openDatabase(tdb.url);
    sim = await startSimulator({
      scripts: {
        // the first run: its classifier's model echoes the key of the worker's environment and an email, and it falls back
        [FLASH_LITE]: [{ kind: 'provider_error', message: `Key ${KEY} may not call this model; write to ${EMAIL}` }, { kind: 'ok' }],
        [GPT_OSS]: [{ kind: 'ok' }],
      },
    });
    dir = copyShowcase();
  }, 120_000);
  afterAll(async () => {
    await sim?.close();
    await closeDb(tdb.url);
    await tdb?.stop();
  });

  /** Queues a run, lets a worker with `env` run it, stops the worker; its stdout and stderr. */
  async function throughWorker(env: Record<string, string | undefined>): Promise<{ runId: string; out: string; err: string }> {
    const queued = await aqvenHere(['run', 'triage', '--queue', '--json', '--project', dir, '--input', JSON.stringify(ticket)], { AQVEN_DATABASE_URL: tdb.url });
    expect(queued.code).toBe(0);
    const { id } = JSON.parse(queued.out) as { id: string };
    db = await openDatabase(tdb.url); // the command closed the pool this process shares with it
    const worker = await startWorker({ url: tdb.url, simUrl: sim.url, project: dir, concurrency: 1, env });
    await eventually('the run to end', async () => {
      const [row] = await db.q.select({ status: db.t.runs.status }).from(db.t.runs).where(eq(db.t.runs.id, id));
      return row && !['queued', 'running'].includes(row.status);
    });
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    return { runId: id, out: worker.out(), err: worker.err() };
  }

  it('JSON lines by default: the worker, its claim and the run, each with the fields a collector needs; no key, no email', async () => {
    const { runId, out, err } = await throughWorker({ OPENROUTER_API_KEY: KEY });
    expect(err).toBe('');
    expect(out).not.toContain(KEY);
    expect(out).not.toContain(EMAIL);
    const lines: LogLine[] = logLines(out); // every line of stdout parses
    for (const l of lines) {
      expect(l).toMatchObject({ name: 'aqven worker', worker: expect.any(String), pid: expect.any(Number), hostname: expect.any(String) });
      expect(['debug', 'info', 'warn', 'error']).toContain(l.level);
      expect(new Date(l.time).toISOString()).toBe(l.time);
    }
    expect(lines[0]!.msg).toMatch(/^\S+ on .*, snapshot \d+, concurrency 1; providers simulated by http:\/\/127\.0\.0\.1:\d+; waiting for runs$/);
    const run = lines.filter((l) => l.runId === runId);
    expect(run.map((l) => l.msg.replace(runId, 'ID'))).toEqual([
      'run ID triage claimed',
      'run ID triage started',
      `classify: openrouter:${FLASH_LITE} answer 1 error (provider_error), action fallback`,
      expect.stringMatching(/^run ID triage succeeded: 3 attempts, \S+ m?s, \$/),
    ]);
    for (const l of run.slice(1)) expect(l).toHaveProperty('traceId');
    expect(run[2]).toMatchObject({ node: 'classify', model: `openrouter:${FLASH_LITE}`, outcome: 'error', cause: 'provider_error', action: 'fallback' });
    expect(run[2]!.error).toContain('<EMAIL>');
    expect(run[3]).toMatchObject({ status: 'succeeded', attempts: 3, usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: expect.any(Number) } });
    expect(lines.at(-1)!.msg).toBe('stopped: 0 finished while draining, 0 handed back');
  }, 90_000);

  it('AQVEN_LOG_FORMAT=pretty: human lines, the same words; a bad AQVEN_LOG_LEVEL is refused before it starts', async () => {
    const { runId, out } = await throughWorker({ AQVEN_LOG_FORMAT: 'pretty', AQVEN_LOG_LEVEL: 'debug' });
    const lines = out.trim().split('\n');
    for (const l of lines) expect(() => JSON.parse(l), l).toThrow();
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(aqven worker\): \S+ on .* waiting for runs \{"worker":"[^"]+"/);
    expect(out).toMatch(new RegExp(`\\] INFO \\(aqven worker\\): run ${runId} triage succeeded: \\d+ attempts?, `));
    expect(out).toMatch(/\] DEBUG \(aqven worker\): /); // the level is the environment's

    const refused = await aqvenHere(['worker', '--project', dir], { AQVEN_DATABASE_URL: tdb.url, AQVEN_LOG_LEVEL: 'loud' });
    expect(refused).toMatchObject({ code: 2, out: '', err: 'aqven worker: AQVEN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"\n' });
  }, 90_000);
});
