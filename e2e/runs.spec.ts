import { expect, test } from '@playwright/test';
import { FlowsPage } from './pages/flows-page';
import { RunPage } from './pages/run-page';
import { RunsPage } from './pages/runs-page';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';

const CLASSIFIER_CHAIN = [`openrouter:${GEMINI}`, `openrouter:${GPT}`];

test.afterEach(async ({ request }) => {
  await resetScripts(request);
});

test('a triage run started from /flows shows on its run page and in the run history', async ({ page, request }) => {
  // the classifier's first model ends with an error (on_error: fallback), the fallback model is
  // rate-limited once (retry-after 1 s), then answers
  await loadScripts(request, {
    [GEMINI]: [{ kind: 'provider_error' }],
    [GPT]: [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'ok' }],
  });
  const flows = new FlowsPage(page);
  await flows.goto();
  await expect(flows.input('triage')).toHaveValue(/"ticket"/);
  await flows.start('triage', { ticket: 'I was charged twice for my March invoice' });

  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const runId = page.url().split('/').pop()!;
  const run = new RunPage(page);
  await expect(run.status()).toHaveText('succeeded', { timeout: 30_000 });

  await expect(run.node('classify')).toHaveAttribute('data-status', 'succeeded');
  await expect(run.node('draft')).toHaveAttribute('data-status', 'succeeded');
  await expect(run.node('manual_review')).toHaveAttribute('data-status', 'skipped');

  const bars = run.attemptBars('classify');
  await expect(bars).toHaveCount(2);
  await expect(bars.nth(0)).toHaveAttribute('data-outcome', 'error');
  await expect(bars.nth(0)).toHaveAttribute('data-cause', 'provider_error');
  await expect(bars.nth(0)).toHaveAttribute('data-action', 'fallback');
  await expect(bars.nth(1)).toHaveAttribute('data-outcome', 'ok');
  await expect(bars.nth(1)).toHaveAttribute('data-action', 'none');
  await expect(run.attemptDetails('classify')).toHaveCount(2);
  // the 429 and its retry-after are visible as a transport try of the fallback's attempt
  await expect(run.attemptDetails('classify').nth(1)).toContainText('429');

  for (const model of CLASSIFIER_CHAIN) {
    await expect(run.gauge('classify', model)).toHaveAttribute('data-answers', '1');
    await expect(run.gauge('classify', model)).toHaveAttribute('data-limit', /^\d+$/);
  }
  await expect(run.chain('classify').getByTestId('chain-model')).toHaveCount(2);
  await expect(run.chainModel('classify', CLASSIFIER_CHAIN[0]!)).toHaveAttribute('data-state', 'failed');
  await expect(run.chainModel('classify', CLASSIFIER_CHAIN[1]!)).toHaveAttribute('data-state', 'answered');
  await expect(run.chainModel('draft', `openrouter:${GPT}`)).toHaveAttribute('data-state', 'answered');

  const runs = new RunsPage(page);
  await runs.goto();
  await expect(runs.row(runId)).toHaveAttribute('data-status', 'succeeded');
  await runs.row(runId).getByRole('link').first().click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
});

test('a failed node shows its error hint and links to its agent’s policy', async ({ page, request }) => {
  // the writer's answer is cut off; on_truncated is "fail" and draft has no on_fail: the run fails
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'truncated' }] });
  const { id, status } = await runToEnd(request, 'triage', { ticket: 'Where is my parcel?' });
  expect(status).toBe('failed');

  const run = new RunPage(page);
  await run.goto(id);
  await expect(run.status()).toHaveText('failed');
  await expect(run.errorHint()).toContainText('output.on_truncated');
  await expect(run.errorHint()).toContainText('agents/writer.yaml');
  await expect(run.node('draft')).toHaveAttribute('data-status', 'failed');
  await expect(run.attemptBars('draft').first()).toHaveAttribute('data-outcome', 'truncated');
  await expect(run.attemptBars('draft').first()).toHaveAttribute('data-cause', 'truncated');
  await expect(run.chainModel('draft', `openrouter:${GPT}`)).toHaveAttribute('data-state', 'failed');
  await run
    .node('draft')
    .getByRole('link', { name: /Change the policy of agent writer/ })
    .click();
  await expect(page).toHaveURL(/\/agents\/writer$/);
});

test('the run history filters by status through the URL', async ({ page, request }) => {
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'truncated' }] });
  const failed = await runToEnd(request, 'triage', { ticket: 'filter me: failed' });
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'ok' }] });
  const succeeded = await runToEnd(request, 'triage', { ticket: 'filter me: succeeded' });
  expect([failed.status, succeeded.status]).toEqual(['failed', 'succeeded']);

  const runs = new RunsPage(page);
  await runs.goto('status=failed');
  await expect(runs.row(failed.id)).toBeVisible();
  await expect(runs.row(succeeded.id)).toHaveCount(0);
  for (const s of await runs.rows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')))) expect(s).toBe('failed');

  // choosing another status in the form changes the URL, and the list with it
  await runs.filter('Status').selectOption('succeeded');
  await expect(page).toHaveURL(/[?&]status=succeeded/);
  await expect(runs.row(succeeded.id)).toBeVisible();
  await expect(runs.row(failed.id)).toHaveCount(0);
});

test('a streamed draft whose connection broke shows the broken text struck through and the final text plain', async ({ page, request }) => {
  await loadScripts(request, {
    [GEMINI]: [{ kind: 'ok' }],
    [GPT]: [
      { kind: 'drop', when: 'mid_stream', text: 'Broken first draft that never finished' },
      { kind: 'ok', text: 'Complete second draft.' },
    ],
  });
  const { id, status } = await runToEnd(request, 'triage', { ticket: 'stream drop' });
  expect(status).toBe('succeeded');
  const run = new RunPage(page);
  await run.goto(id);
  const draft = run.node('draft');
  await expect(draft).toHaveAttribute('data-status', 'succeeded');
  const struck = draft.locator('.discarded', { hasText: 'Broken first draft' });
  await expect(struck.first()).toBeVisible();
  await expect(struck.first()).toHaveCSS('text-decoration-line', 'line-through');
  await expect(draft.getByText('Complete second draft.').first()).toBeVisible();
  await expect(draft.locator('.discarded', { hasText: 'Complete second draft.' })).toHaveCount(0);
  // the broken draft was billed all the same: the dashboard's server asks the provider for its usage in the background
  const lookup = async () => {
    const rec = (await (await request.get(`/api/runs/${id}`)).json()) as { nodes: { id: string; attempts: { usageLookup: string | null; usageUnknown: boolean }[] }[] };
    return rec.nodes.find((n) => n.id === 'draft')?.attempts[0];
  };
  await expect.poll(async () => (await lookup())?.usageLookup, { timeout: 20_000 }).toBe('found');
  expect((await lookup())?.usageUnknown).toBe(false);
  await run.goto(id);
  await expect(draft.getByTestId('usage-lookup').first()).toHaveText('usage found later');
});
