// Alerts when a failure starts, end to end (docs/monitoring.md, "Alerts"): runs over the simulator
// fail, the process's alerting (lib/observe/alerts) hears their ends, groups their committed
// failures and tells a real webhook on loopback — once per cool-down (virtual time), retried after
// a 500, recorded in the `alerts` table; the periodic rules see a long pause and a waiting queue.
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alertRow } from '@/db/alert-queries';
import { nodeSignature } from '@/db/run-aggregates';
import type { Db } from '@/db/types';
import { SHARE_EVERY_MS } from '@/lib/observe/alerts/alerting';
import { startAlerts, type RunningAlerts } from '@/lib/observe/alerts/start-alerts';
import { DIALECTS } from '../helpers/dialects';
import { copyShowcase, FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';
import { WEBHOOK_SECRET_PATH, webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const MIN = 60_000;
const HOUR = 60 * MIN;
const ticket = { ticket: 'I was charged twice for my subscription this month.' };
/** classify refuses (on_refusal: fail), the run routes around it to manual_review: a failed node in a run that succeeds */
const REFUSES = { [FLASH_LITE]: [{ kind: 'refusal' as const }], [GPT_OSS]: [{ kind: 'ok' as const }] };

let w: World<Db> | null = null;
let hook: WebhookReceiver | null = null;
let alerts: RunningAlerts | null = null;
afterEach(async () => {
  await alerts?.stop(0);
  await w?.close();
  await hook?.close();
  w = hook = alerts = null;
});

/** A virtual clock for the alerting (the runs keep real time): `advance` moves it, sleeps are recorded, not waited. */
function virtualClock() {
  let t = Date.now();
  const slept: number[] = [];
  return {
    clock: { now: () => t, sleep: async (ms: number) => void slept.push(ms), random: () => 0 },
    advance: (ms: number) => void (t += ms),
    slept,
  };
}

/** The showcase with `alerts:` in its aqven.yaml. */
function showcaseWithAlerts(alerts: string): string {
  const dir = copyShowcase();
  const file = join(dir, 'aqven.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8')}alerts:\n${alerts}`);
  return dir;
}

const env = (url: string) => ({ SHOWCASE_WEBHOOK_URL: url, AQVEN_PUBLIC_URL: 'https://aqven.example.com' });

describe.each(DIALECTS)('alerts on %s', (dialect) => {
  it('a new failure signature: two failing runs within the cool-down send one alert; after the cool-down, another', async () => {
    hook = await webhookReceiver();
    const v = virtualClock();
    const warnings: string[] = [];
    alerts = startAlerts({ clock: v.clock, env: env(hook.url), onWarning: (l) => warnings.push(l) });
    w = await worldOn(dialect, REFUSES, showcaseWithAlerts('  webhook: { url_env: SHOWCASE_WEBHOOK_URL }\n  cooldown: 1h\n'));

    const first = await w.run('triage', ticket);
    expect(first.status).toBe('succeeded'); // routed around the failed classify
    expect(first.nodes.find((n) => n.id === 'classify')!.status).toBe('failed');
    await alerts.alerting.settle(20_000);
    v.advance(10 * MIN);
    await w.run('triage', ticket);
    await alerts.alerting.settle(20_000);

    expect(hook.received).toHaveLength(1);
    const [got] = hook.received;
    expect(got!.path).toBe(WEBHOOK_SECRET_PATH);
    expect(got!.contentType).toBe('application/json');
    const error = first.nodes.find((n) => n.id === 'classify')!.error!;
    const sig = nodeSignature('classifier', { code: error.code, message: error.message }).sig;
    const body = got!.body as { text: string; blocks: { elements?: { text: string }[] }[] };
    expect(body.text).toMatch(/^AQVEN showcase: New failure in agent classifier: refusal: /);
    expect(body.blocks[1]!.elements![0]!.text).toContain(`<https://aqven.example.com/failures?agent=classifier#fg-${sig}|Open on the dashboard>`);
    expect(await alertRow(w.db, `new_failure:${sig}`)).toMatchObject({ rule: 'new_failure', agent: 'classifier', sig, status: 'delivered', tries: 1, timesFired: 1 });

    // the cool-down is over: the same failure, still new (first seen within new_for), is told again
    v.advance(HOUR);
    await w.run('triage', ticket);
    await alerts.alerting.settle(20_000);
    expect(hook.received).toHaveLength(2);
    expect(await alertRow(w.db, `new_failure:${sig}`)).toMatchObject({ status: 'delivered', timesFired: 2 });
    expect(warnings).toEqual([]);
  });
});

describe('alerts', () => {
  it('a delivery answered 500 is tried again after the backoff: delivered on the second try, the 500 kept as its last error', async () => {
    hook = await webhookReceiver();
    hook.answer(500, 200);
    const v = virtualClock();
    alerts = startAlerts({ clock: v.clock, env: env(hook.url) });
    w = await worldOn('sqlite', REFUSES, showcaseWithAlerts('  webhook: { url_env: SHOWCASE_WEBHOOK_URL, format: generic }\n'));
    await w.run('triage', ticket);
    await alerts.alerting.settle(20_000);

    expect(hook.received).toHaveLength(2);
    expect(hook.received[0]!.body).toEqual(hook.received[1]!.body);
    expect(hook.received[1]!.body).toMatchObject({ source: 'aqven', project: 'showcase', rule: 'new_failure', details: { agent: 'classifier', code: 'refusal', flow: 'triage' } });
    // the first backoff, random 0: 1 s, waited on the injected clock
    expect(v.slept).toEqual([1000]);
    const [row] = await w.db.q.select().from(w.db.t.alerts);
    expect(row).toMatchObject({ status: 'delivered', tries: 2, lastError: 'HTTP 500: upstream_unavailable' });
    // the webhook's URL is a secret: no part of it is stored
    expect(JSON.stringify(row)).not.toContain('s3cr3t');
  });

  it('a webhook that keeps failing: tried 4 times, recorded failed, said once', async () => {
    hook = await webhookReceiver();
    hook.answer(503);
    const v = virtualClock();
    const warnings: string[] = [];
    alerts = startAlerts({ clock: v.clock, env: env(hook.url), onWarning: (l) => warnings.push(l) });
    w = await worldOn('sqlite', REFUSES, showcaseWithAlerts('  webhook: { url_env: SHOWCASE_WEBHOOK_URL }\n'));
    await w.run('triage', ticket);
    await alerts.alerting.settle(20_000);
    expect(hook.received).toHaveLength(4);
    expect(v.slept).toEqual([1000, 2000, 4000]);
    const [row] = await w.db.q.select().from(w.db.t.alerts);
    expect(row).toMatchObject({ status: 'failed', tries: 4, lastError: 'HTTP 503: upstream_unavailable', deliveredAt: null });
    expect(warnings).toEqual([`alerts: "New failure in agent classifier" was not delivered after 4 tries: HTTP 503: upstream_unavailable`]);
  });

  it("an agent's failure share over the window passes its threshold", async () => {
    hook = await webhookReceiver();
    const v = virtualClock();
    alerts = startAlerts({ clock: v.clock, env: env(hook.url) });
    const rules = '  rules:\n    new_failure: { enabled: false }\n    failure_share: { threshold: 0.5, min_nodes: 3 }\n';
    w = await worldOn('sqlite', REFUSES, showcaseWithAlerts(`  webhook: { url_env: SHOWCASE_WEBHOOK_URL, format: generic }\n${rules}`));
    for (let i = 0; i < 3; i++) {
      await w.run('triage', ticket);
      await alerts.alerting.settle(20_000);
      // each failing run counts the share again once SHARE_EVERY_MS has passed
      v.advance(SHARE_EVERY_MS);
    }
    expect(hook.received.map((r) => r.body)).toEqual([
      expect.objectContaining({
        rule: 'failure_share',
        key: 'failure_share:classifier',
        title: 'Agent classifier fails 100% of its nodes',
        text: '3 of 3 nodes failed in the last 15 min (threshold 50%)',
        url: 'https://aqven.example.com/failures?agent=classifier',
      }),
    ]);
  });

  it('the periodic check: a model paused longer than its limit, and a queued run waiting too long', async () => {
    hook = await webhookReceiver();
    const v = virtualClock();
    const now = v.clock.now();
    w = await worldOn(
      'sqlite',
      REFUSES,
      showcaseWithAlerts('  webhook: { url_env: SHOWCASE_WEBHOOK_URL, format: generic }\n  rules: { model_paused: { longer_than: 5m }, queue_wait: { longer_than: 2m } }\n'),
    );
    const world = w;
    alerts = startAlerts({ clock: v.clock, env: env(hook.url), periodic: async () => ({ db: world.db, project: world.project }) });
    const { rateLimitPauses, runs } = w.db.t;
    const pause = { model: 'openrouter:openai/gpt-oss-20b', reason: 'rate limited', serverWait: null, askedMs: 60_000, maxWaitMs: 60_000 };
    await w.db.q.insert(rateLimitPauses).values({ ...pause, pausedUntil: now + MIN, setAt: now - 3 * MIN });
    await w.db.q.insert(runs).values({ id: 'q-1', project: 'showcase', flow: 'triage', status: 'queued', startedAt: now - MIN, queuedAt: now - MIN });

    // paused 3 min, queued 1 min: nothing yet
    await alerts.checkNow();
    expect(hook.received).toHaveLength(0);
    // a later 429 renews the pause: the checks count from the first they saw
    v.advance(3 * MIN);
    await w.db.q.update(rateLimitPauses).set({ pausedUntil: v.clock.now() + MIN, setAt: v.clock.now() - 10_000 });
    await alerts.checkNow();
    expect(hook.received.map((r) => (r.body as { key: string }).key).sort()).toEqual(['model_paused:openrouter:openai/gpt-oss-20b', 'queue_wait']);
    expect(hook.received.find((r) => (r.body as { key: string }).key === 'queue_wait')!.body).toMatchObject({
      title: 'A queued run has waited 4 min for a worker',
      details: { runId: 'q-1', waitedMs: 4 * MIN },
    });
    expect(hook.received.find((r) => (r.body as { key: string }).key.startsWith('model_paused'))!.body).toMatchObject({
      title: 'Model openrouter:openai/gpt-oss-20b paused for 6 min',
      path: '/providers',
    });
    // within the cool-down, the next check sends nothing
    v.advance(MIN);
    await alerts.checkNow();
    expect(hook.received).toHaveLength(2);
  });

  it('a process without the webhook variable sends nothing and holds no key (another process that has it may send), and says so once', async () => {
    const v = virtualClock();
    const warnings: string[] = [];
    w = await worldOn('sqlite', REFUSES, showcaseWithAlerts('  webhook: { url_env: SHOWCASE_WEBHOOK_URL }\n  rules: { model_paused: { longer_than: 1m } }\n'));
    const world = w;
    alerts = startAlerts({ clock: v.clock, env: {}, onWarning: (l) => warnings.push(l), periodic: async () => ({ db: world.db, project: world.project }) });
    const now = v.clock.now();
    const pause = { model: 'openrouter:openai/gpt-oss-20b', reason: 'rate limited', serverWait: null, askedMs: 60_000, maxWaitMs: 60_000 };
    await w.db.q.insert(w.db.t.rateLimitPauses).values({ ...pause, pausedUntil: now + MIN, setAt: now - 2 * MIN });
    await alerts.checkNow();
    await alerts.checkNow();
    expect(warnings).toEqual(['alerts: "Model openrouter:openai/gpt-oss-20b paused for 2 min" was not sent: SHOWCASE_WEBHOOK_URL is not set in this process']);
    expect(await w.db.q.select().from(w.db.t.alerts)).toEqual([]);
  });
});
