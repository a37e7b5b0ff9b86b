// The metrics after real runs (DESIGN: Observability, "Metrics"): a run of the showcase against the
// simulator — a 429 that pauses the first model, an error that falls back, an email in the error —
// told to the metrics' observer through the seam every run tells (lib/flow/run-observers.ts), and
// the exposition compared with what the database recorded: attempts by model, outcome, cause and
// action, tries, tokens, cost, the run; the pause read from the database while it is in force; the
// redaction of the email.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { activePauses } from '@/db/pause-queries';
import { addRunObserver, watchRun, type ObservedRun } from '@/lib/flow/run-observers';
import { createMetrics } from '@/lib/observe/metrics';
import { forgetProcessMetricsForTests, processMetrics } from '@/lib/observe/process-metrics';
import { samples, series, total } from '../helpers/metrics-text';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
const removals: (() => void)[] = [];
afterEach(async () => {
  for (const remove of removals.splice(0)) remove();
  await w?.close();
  w = null;
});

const ticket = { ticket: 'I was charged twice for my subscription this month.' };

describe('the metrics of real runs', () => {
  it('agree with the attempts, tries and usage the database recorded; the pause is read from the database while it is in force; the email in the error is counted as redacted', async () => {
    let scrapeAt: number | null = null;
    const metrics = createMetrics({ now: () => scrapeAt ?? Date.now() });
    removals.push(addRunObserver(metrics.observer));
    const before = samples((await metrics.expose(null)).body);
    w = await world({
      [FLASH_LITE]: [
        { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
        { kind: 'provider_error', message: 'upstream failed; write to anna@example.com for help' },
      ],
      [GPT_OSS]: [{ kind: 'ok' }],
    });
    const rec = await w.run('triage', ticket);
    expect(rec.status).toBe('succeeded');
    const { db } = w;

    // while the pause is in force (a scrape at the 429's time), and after it ended
    const [pause] = await db.q.select().from(db.t.rateLimitPauses);
    expect(pause).toBeDefined();
    scrapeAt = pause!.setAt! + 100;
    const s = samples((await metrics.expose(db)).body);
    expect(await activePauses(db, scrapeAt)).toHaveLength(1);
    const flash = { provider: 'openrouter', model: FLASH_LITE };
    expect(series(s, 'aqven_rate_limit_paused')).toEqual([{ labels: flash, value: 1 }]);
    expect(series(s, 'aqven_rate_limit_pause_remaining_seconds', flash)[0]!.value).toBeCloseTo((pause!.pausedUntil - scrapeAt) / 1000, 6);
    expect(series(s, 'aqven_database_up')).toEqual([{ labels: {}, value: 1 }]);
    // SQLite: nothing is queued, no queue gauges
    expect(series(s, 'aqven_queue_jobs')).toEqual([]);
    expect(series(s, 'aqven_workers_live')).toEqual([]);
    scrapeAt = null;
    expect(series(samples((await metrics.expose(db)).body), 'aqven_rate_limit_paused')).toEqual([]);

    // every stored attempt, counted once under its model, outcome, cause and action
    const attempts = await db.q.select().from(db.t.attempts);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    const byLabels = new Map<string, number>();
    for (const a of attempts) {
      const [provider, model] = [a.model.slice(0, a.model.indexOf(':')), a.model.slice(a.model.indexOf(':') + 1)];
      const k = JSON.stringify({ provider, model, outcome: a.outcome, cause: a.cause ?? 'none', action: a.action });
      byLabels.set(k, (byLabels.get(k) ?? 0) + 1);
    }
    const counted = new Map(series(s, 'aqven_attempts_total').map((x) => [JSON.stringify(x.labels), x.value]));
    expect(counted).toEqual(byLabels);
    expect(series(s, 'aqven_attempts_total', { ...flash, outcome: 'error', cause: 'provider_error', action: 'fallback' })).toHaveLength(1);

    const tries = await db.q.select().from(db.t.transportTries);
    expect(total(series(s, 'aqven_transport_tries_total'))).toBe(tries.length);
    expect(total(series(s, 'aqven_transport_tries_total', { result: 'rate_limited' }))).toBe(tries.filter((t) => t.error === 'rate_limited').length);
    expect(total(series(s, 'aqven_transport_retries_total', { reason: 'rate_limited' }))).toBe(1);
    expect(total(series(s, 'aqven_rate_limit_pauses_total', flash))).toBe(1);

    const sum = (f: (a: (typeof attempts)[number]) => number) => attempts.reduce((n, a) => n + f(a), 0);
    expect(total(series(s, 'aqven_tokens_total', { type: 'input' }))).toBe(sum((a) => a.inputTokens ?? 0));
    expect(total(series(s, 'aqven_tokens_total', { type: 'output' }))).toBe(sum((a) => a.outputTokens ?? 0));
    expect(total(series(s, 'aqven_cost_usd_total'))).toBeCloseTo(rec.usage.costUsd, 9);
    expect(series(s, 'aqven_runs_total')).toEqual([{ labels: { flow: 'triage', kind: 'flow', status: 'succeeded' }, value: 1 }]);
    // the nodes that ran: classify and draft, each once
    expect(
      series(s, 'aqven_node_duration_seconds_count')
        .map((x) => `${x.labels.node} ${x.labels.status} ${x.value}`)
        .sort(),
    ).toEqual(['classify succeeded 1', 'draft succeeded 1']);

    // the email was redacted before the error was stored, and counted
    expect(JSON.stringify(attempts.map((a) => a.errorMessage))).toContain('<EMAIL>');
    const emails = (x: Map<string, number>) => total(series(x, 'aqven_redactions_total', { kind: 'email' }));
    expect(emails(s) - emails(before)).toBeGreaterThanOrEqual(1);
    // no run id, no input, no failure text in any label
    const text = (await metrics.expose(db)).body;
    for (const leak of [rec.id, 'charged twice', 'anna@example.com', 'upstream failed']) expect(text).not.toContain(leak);
  }, 60_000);
});

describe("the process's metrics", () => {
  it('are made once and watch every run from then on; forgotten, they watch none and the next ask makes new ones', () => {
    // only whether the observer is asked matters here
    const run = { runId: 'r1', flow: 'triage', kind: 'flow' } as ObservedRun;
    const first = processMetrics();
    expect(processMetrics()).toBe(first);
    const watch = vi.spyOn(first.observer, 'watch').mockReturnValue(null);
    watchRun(run);
    expect(watch).toHaveBeenCalledTimes(1);
    forgetProcessMetricsForTests();
    watchRun(run);
    expect(watch).toHaveBeenCalledTimes(1);
    expect(processMetrics()).not.toBe(first);
    forgetProcessMetricsForTests();
  });
});
