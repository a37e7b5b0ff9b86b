// The typed client `aqven/client` (docs/client.md) and the example service (examples/) against a
// real HTTP server: the API's route handlers on a socket (test/helpers/api-server.ts). Every method,
// a 429 with Retry-After from the runs per minute (AQVEN_RUNS_PER_MINUTE) retried with the same
// Idempotency-Key, and a ticket classified through the example service in one request.
// dist/client is built from the source first (buildClient, what `npm run build:cli` also does), so
// the package entry point itself is what is called.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '@/db/account-queries';
import type { Db } from '@/db/types';
import type { AqvenError, RunEvent } from 'aqven/client';
import { buildClient } from '@/scripts/build-cli.mjs';
import { apiServer } from '../helpers/api-server';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dash = simulatedDashboard();
const OK = { [FLASH_LITE]: Array.from({ length: 20 }, () => ({ kind: 'ok' as const })), [GPT_OSS]: Array.from({ length: 20 }, () => ({ kind: 'ok' as const })) };
let db: Db;
let server: Awaited<ReturnType<typeof apiServer>>;
let token = '';
let createClient: typeof import('aqven/client').createClient;
let AqvenErrorClass: typeof AqvenError;
let ticketService: typeof import('@/examples/ticket-service.mjs').ticketService;

beforeAll(async () => {
  await buildClient();
  ({ createClient, AqvenError: AqvenErrorClass } = await import('aqven/client'));
  ({ ticketService } = await import('@/examples/ticket-service.mjs'));
  db = (await dash.open({ scripts: OK })).session.db;
  token = (await createToken(db, { name: 'service', role: 'editor', createdBy: null, expiresAt: null, budgetUsdPerDay: null }, Date.now())).token;
  server = await apiServer();
}, 90_000);
afterAll(async () => {
  await server?.close();
  await dash.close();
});

describe('aqven/client against a real server', () => {
  let runId = '';

  it('runs.start with a wait: the record; without: the id; the same key: the same run', async () => {
    const aqven = createClient({ baseUrl: server.url, token });
    const ended = await aqven.runs.start('triage', { ticket: 'my invoice is wrong' }, { wait: 20, idempotencyKey: 'ticket-1' });
    expect(ended).toMatchObject({ ended: true, replayed: false, run: { flow: 'triage', status: 'succeeded' } });
    runId = ended.ended ? ended.run.id : '';
    const again = await aqven.runs.start('triage', { ticket: 'my invoice is wrong' }, { wait: 20, idempotencyKey: 'ticket-1' });
    expect(again).toMatchObject({ ended: true, replayed: true, run: { id: runId } });
    const reused = await aqven.runs.start('triage', { ticket: 'another ticket' }, { idempotencyKey: 'ticket-1' }).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(AqvenErrorClass);
    expect(reused).toMatchObject({ status: 422, code: 'E_IDEMPOTENCY_KEY_REUSED' });
    const queued = await aqven.runs.start('triage', { ticket: 'the app crashes' });
    expect(queued).toMatchObject({ ended: false, replayed: false, id: expect.any(String) });
  });

  it('runs.get (with a wait) and runs.list (with filters)', async () => {
    const aqven = createClient({ baseUrl: server.url, token });
    expect(await aqven.runs.get(runId, { wait: 5 })).toMatchObject({ id: runId, status: 'succeeded', nodes: expect.any(Array) });
    const page = await aqven.runs.list({ flow: 'triage', status: 'succeeded', limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ flow: 'triage', status: 'succeeded' });
    expect((await aqven.runs.get('no-such-run').catch((e: unknown) => e)) as AqvenError).toMatchObject({ status: 404, code: 'E_RUN' });
  });

  it('runs.events: every event to run.ended; lastEventId resumes after it, nothing repeated', async () => {
    const aqven = createClient({ baseUrl: server.url, token });
    const all: RunEvent[] = [];
    for await (const e of aqven.runs.events(runId)) all.push(e);
    expect(all[0]!.event).toBe('run.started');
    expect(all.at(-1)).toMatchObject({ event: 'run.ended', data: { status: 'succeeded' } });
    const rest: RunEvent[] = [];
    for await (const e of aqven.runs.events(runId, { lastEventId: all[2]!.id })) rest.push(e);
    expect(rest.map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
  });

  it('retries a 429 after its Retry-After with the same Idempotency-Key, a bounded number of times', async () => {
    process.env.AQVEN_RUNS_PER_MINUTE = '1';
    const limited = (await createToken(db, { name: 'limited', role: 'editor', createdBy: null, expiresAt: null, budgetUsdPerDay: null }, Date.now())).token;
    const keys: Array<string | null> = [];
    const statuses: number[] = [];
    const seen: typeof fetch = async (url, init) => {
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      const res = await fetch(url, init);
      statuses.push(res.status);
      return res;
    };
    const slept: number[] = [];
    const aqven = createClient({ baseUrl: server.url, token: limited, fetch: seen, maxRetries: 2, sleep: async (ms) => void slept.push(ms) });
    expect(await aqven.runs.start('triage', { ticket: 'one' })).toMatchObject({ ended: false });
    // the second run start in the minute: 429 with Retry-After, retried twice, then the error
    const refused = (await aqven.runs.start('triage', { ticket: 'two' }).catch((e: unknown) => e)) as AqvenError;
    expect(refused).toMatchObject({ status: 429, code: 'E_LIMIT', retryAfterS: expect.any(Number) });
    expect(statuses.slice(1)).toEqual([429, 429, 429]);
    expect(slept).toHaveLength(2);
    expect(slept[0]).toBeGreaterThan(0);
    expect(slept[0]).toBe(refused.retryAfterS! * 1000);
    expect(new Set(keys.slice(1)).size).toBe(1);
    expect(keys[1]).not.toBe(keys[0]);
    // the limit lifted while the client sleeps: its retry starts the run, with the key it began with
    const lifting = createClient({ baseUrl: server.url, token: limited, fetch: seen, sleep: async () => void (process.env.AQVEN_RUNS_PER_MINUTE = '0') });
    keys.length = 0;
    statuses.length = 0;
    expect(await lifting.runs.start('triage', { ticket: 'three' }, { idempotencyKey: 'three' })).toMatchObject({ ended: false, replayed: false });
    expect(statuses).toEqual([429, 202]);
    expect(keys).toEqual(['three', 'three']);
    delete process.env.AQVEN_RUNS_PER_MINUTE;
  });
});

describe('the example service (examples/ticket-service.mjs)', () => {
  it('classifies a ticket through AQVEN and answers in the same request', async () => {
    const svc = ticketService({ aqvenUrl: server.url, token, wait: 20 });
    await new Promise<void>((resolve) => svc.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = svc.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/tickets`, { method: 'POST', body: JSON.stringify({ ticket: 'I was charged twice' }) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ queue: expect.stringMatching(/^(billing|tech|sales)$/), confidence: expect.any(Number), run: expect.any(String) });
      expect(await createClient({ baseUrl: server.url, token }).runs.get(body.run as string)).toMatchObject({ status: 'succeeded', input: { ticket: 'I was charged twice' } });
    } finally {
      svc.closeAllConnections();
      await new Promise((r) => svc.close(r));
    }
  });
});
