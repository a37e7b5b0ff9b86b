// GET /metrics on the served dashboard (docs/monitoring.md, "Metrics"): the route is Next.js's bundle
// of lib/, yet it exposes the registry `aqven serve` made as it started (on globalThis), fed by the
// runs the dashboard runs — so a run started through the API shows up, with its model and outcome —
// to a request from this machine, with no credential.
import { expect, test } from '@playwright/test';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';

test.afterEach(async ({ request }) => resetScripts(request));

/** The value of one sample line, or 0 when the series is not there yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('GET /metrics counts the runs the dashboard ran, for this machine without a credential', async ({ request }) => {
  const failed = `aqven_attempts_total{provider="openrouter",model="${GEMINI}",outcome="error",cause="provider_error",action="fallback"}`;
  const read = async () => {
    const res = await request.get('/metrics', { headers: { cookie: '' } });
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.text();
  };
  const before = await read();
  await loadScripts(request, { [GEMINI]: [{ kind: 'provider_error' }], [GPT]: [{ kind: 'ok' }] });
  const run = await runToEnd(request, 'triage', { ticket: 'metrics: an error, then the fallback answers' });
  expect(run.status).toBe('succeeded');
  const after = await read();
  expect(sample(after, failed) - sample(before, failed)).toBe(1);
  const ended = 'aqven_runs_total{flow="triage",kind="flow",status="succeeded"}';
  expect(sample(after, ended) - sample(before, ended)).toBe(1);
  expect(after).toMatch(/^aqven_database_up 1$/m);
  expect(after).toMatch(/^process_cpu_seconds_total /m);
  expect(after).not.toContain(run.id);
});
