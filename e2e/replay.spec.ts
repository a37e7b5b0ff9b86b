import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { shortRunId } from '../lib/shared/short-id';
import { e2eProjectDir } from './project-dir';
import { RunPage } from './pages/run-page';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

const writerFile = () => join(e2eProjectDir(), 'agents', 'writer.yaml');
let shipped: string | null = null;

test.afterEach(async ({ request }) => {
  // the writer as shipped again, for the specs after this one
  if (shipped !== null) writeFileSync(writerFile(), shipped);
  shipped = null;
  await resetScripts(request);
});

test('a node that failed is replayed under the changed policy and now succeeds, shown beside the original', async ({ page, request }, testInfo) => {
  // policy A: the writer has no fallback and fails on a refusal; gpt-oss refuses every answer
  await loadScripts(request, { [GEMINI]: [{ kind: 'ok' }], [GPT]: [{ kind: 'refusal' }] });
  const ticket = `Replay me ${Date.now()}: my invoice is wrong`;
  const original = await runToEnd(request, 'triage', { ticket });
  expect(original.status).toBe('failed');

  // the preview opened by the run's short id goes on to its full id, as the run page does
  await openPage(page, `/runs/${shortRunId(original.id)}/replay?node=draft`);
  await expect(page).toHaveURL(new RegExp(`/runs/${original.id}/replay\\?node=draft$`), { timeout: 30_000 });
  await expect(page.getByTestId('replay-preview')).toBeVisible();

  const run = new RunPage(page);
  await run.goto(original.id);
  await expect(run.node('draft')).toHaveAttribute('data-status', 'failed');
  // the classify node succeeded: no replay offered there
  await expect(run.node('classify').getByTestId('replay-node-link')).toHaveCount(0);

  // policy B, as a person would save it: a fallback model, and a refusal falls back to it
  shipped = readFileSync(writerFile(), 'utf8');
  expect(shipped).toContain('on_refusal: "fail"');
  writeFileSync(
    writerFile(),
    shipped
      .replace(`model: "openrouter:${GPT}"\n`, `model: "openrouter:${GPT}"\nfallback_models:\n- "openrouter:${GEMINI}"\n`)
      .replace('on_refusal: "fail"', 'on_refusal: "fallback"'),
  );

  await run.node('draft').getByTestId('replay-node-link').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${original.id}/replay\\?node=draft$`), { timeout: 30_000 });
  const preview = page.getByTestId('replay-preview');
  await expect(preview.getByTestId('replay-original-status')).toHaveText('failed');
  // what changed in the policy, and the request (the prompt is the same)
  const policy = page.getByTestId('replay-policy');
  await expect(policy).toContainText(`chain: openrouter:${GPT}  ⇒  openrouter:${GPT} → openrouter:${GEMINI}`);
  await expect(policy).toContainText('onRefusal: fail  ⇒  fallback');
  await expect(page.getByTestId('prompt-diff')).toHaveAttribute('data-changed', 'false');
  await expect(page.getByTestId('prompt-diff')).toContainText(ticket);
  await expect(page.getByTestId('replay-estimate-cost')).toHaveText(/^\$/);
  await page.setViewportSize({ width: 1280, height: 900 });
  await shoot(page, testInfo, 'replay-preview-1280.png');
  await page.setViewportSize({ width: 390, height: 844 });
  await shoot(page, testInfo, 'replay-preview-390.png');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

  // a cap under the estimate is refused, nothing started
  await page.getByTestId('replay-cap').fill('0.0000000001');
  await page.getByTestId('replay-start').click();
  await expect(page.getByTestId('field-error')).toHaveAttribute('data-code', 'E_CAP');
  await expect(page).toHaveURL(/\/replay\?node=draft$/);

  await page.getByTestId('replay-cap').fill('1');
  await page.getByTestId('replay-start').click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/, { timeout: 30_000 });
  const replayId = page.url().split('/').pop()!;
  expect(replayId).not.toBe(original.id);

  // the replay beside the original: failed then, succeeds now, through the fallback model
  const compare = page.getByTestId('replay-compare');
  await expect(compare.getByTestId('replay-verdict')).toHaveAttribute('data-verdict', 'fixed', { timeout: 30_000 });
  await expect(compare.getByTestId('replay-original-status')).toHaveText('failed');
  await expect(compare.getByTestId('replay-replay-status')).toHaveText('succeeded');
  await expect(compare.getByTestId('replay-original').locator(`[data-testid="chain-model"][data-model="openrouter:${GPT}"]`)).toHaveAttribute('data-state', 'failed');
  const after = compare.getByTestId('replay-replay');
  await expect(after.locator(`[data-testid="chain-model"][data-model="openrouter:${GPT}"]`)).toHaveAttribute('data-state', 'failed');
  await expect(after.locator(`[data-testid="chain-model"][data-model="openrouter:${GEMINI}"]`)).toHaveAttribute('data-state', 'answered');
  await expect(after.getByTestId('replay-replay-answer')).not.toBeEmpty();
  await expect(after.getByTestId('replay-replay-cost')).toHaveText(/^\$/);
  await expect(compare.getByTestId('replay-original-link')).toHaveAttribute('href', `/runs/${original.id}#node-draft`);
  // the replay is its own run: one node, recorded with its attempts
  await expect(run.status()).toHaveText('succeeded');
  await expect(page.getByTestId('node-row')).toHaveCount(1);
  await expect(run.attemptBars('draft')).toHaveCount(2);
  await page.setViewportSize({ width: 1280, height: 900 });
  await shoot(page, testInfo, 'replay-compare-1280.png');
  await page.setViewportSize({ width: 390, height: 844 });
  await shoot(page, testInfo, 'replay-compare-390.png');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

  // the original names its replay
  await run.goto(original.id);
  await expect(page.getByTestId('replays-of').locator(`a[href="/runs/${replayId}"]`)).toBeVisible();
});
