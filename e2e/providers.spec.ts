// /providers shows a rate-limit pause with its origin and lets an editor clear it (DESIGN: Transport
// retry and rate limits, The dashboard). The pause is made the real way: a scripted 429 whose
// retry-after is in year 9999, which must pause the model for at most on_rate_limit.max_wait.
import { expect, test, type Page } from '@playwright/test';
import { ProvidersPage } from './pages/providers-page';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { shoot } from './pages/shoot';

const MODEL = `openrouter:${GEMINI}`;
const FAR = 'Fri, 31 Dec 9999 23:59:59 GMT';
const MAX_WAIT_MS = 60_000; // showcase/providers/openrouter.yaml

interface TryJson {
  status: number | null;
  waitedMs: number;
}
interface RunJson {
  nodes: { id: string; attempts: { model: string; outcome: string; error: { kind: string; message: string } | null; transport: TryJson[] }[] }[];
}

async function classifyAttempts(page: Page, id: string) {
  const res = await page.request.get(`/api/runs/${id}`);
  expect(res.ok()).toBe(true);
  return ((await res.json()) as RunJson).nodes.find((n) => n.id === 'classify')!.attempts;
}

/** nothing wider than the viewport: the page works without sideways scrolling */
async function expectNoSideways(page: Page) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}

test.afterEach(async ({ page, request }) => {
  await resetScripts(request);
  // leave no pause behind for the specs that follow
  const providers = new ProvidersPage(page);
  await providers.goto();
  if (await providers.pause(MODEL).count()) {
    await providers.clearButton(MODEL).click();
    await expect(providers.pause(MODEL)).toHaveCount(0);
  }
});

test('a 429 with retry-after in year 9999 pauses the model for max_wait at most; /providers shows why, and clearing it lets the model be called at once', async ({
  page,
  request,
}, testInfo) => {
  await loadScripts(request, {
    [GEMINI]: [{ kind: 'status', status: 429, headers: { 'retry-after': FAR } }, { kind: 'ok' }],
    [GPT]: [{ kind: 'ok' }],
  });
  const before = Date.now();
  const first = await runToEnd(request, 'triage', { ticket: 'I was charged twice for my March invoice' });
  expect(first.status).toBe('succeeded'); // the classifier fell back to its second model
  const [gaveUp] = await classifyAttempts(page, first.id);
  expect(gaveUp).toMatchObject({ model: MODEL, outcome: 'error', error: { kind: 'transport' } });
  expect(gaveUp!.error!.message).toMatch(/longer than on_rate_limit\.max_wait .*: not retried/);
  expect(gaveUp!.transport.map((t) => t.status)).toEqual([429]);

  // the pause, with its origin
  await page.setViewportSize({ width: 1280, height: 900 });
  const providers = new ProvidersPage(page);
  await providers.goto();
  const pause = providers.pause(MODEL);
  await expect(pause).toBeVisible();
  await expect(pause).toHaveAttribute('data-provider', 'openrouter');
  await expect(pause).toContainText(GEMINI);
  await expect(providers.origin(MODEL)).toContainText(`retry-after: ${FAR}`);
  await expect(providers.origin(MODEL)).toContainText('years');
  await expect(pause.getByTestId('pause-capped')).toContainText('Capped at on_rate_limit.max_wait (60s)');
  // until when: at most max_wait after the 429, nowhere near year 9999
  const until = Date.parse((await pause.locator('time').first().getAttribute('datetime'))!);
  expect(until).toBeGreaterThan(before);
  expect(until).toBeLessThanOrEqual(Date.now() + MAX_WAIT_MS);
  await expectNoSideways(page);
  await shoot(page, testInfo, 'providers-1280.png');

  // the action validates the model string it is sent (zod): a forged one is refused, nothing cleared
  await pause.locator('input[name="model"]').evaluate((el: HTMLInputElement) => (el.value = 'not a model string'));
  await providers.clearButton(MODEL).click();
  await expect(page.getByTestId('field-error')).toHaveAttribute('data-code', 'E_MODEL');
  await expect(page.getByTestId('field-error')).toContainText('provider:model-id');
  await providers.goto();
  await expect(pause).toBeVisible();

  // on a phone: everything still there, nothing sideways, and the button works
  await page.setViewportSize({ width: 390, height: 844 });
  await providers.goto();
  await expect(providers.origin(MODEL)).toContainText(`retry-after: ${FAR}`);
  await expect(providers.clearButton(MODEL)).toBeInViewport();
  await expectNoSideways(page);
  await shoot(page, testInfo, 'providers-390.png');

  await providers.clearButton(MODEL).click();
  await expect(providers.pause(MODEL)).toHaveCount(0);
  await expect(providers.cleared()).toHaveAttribute('data-model', MODEL);
  await shoot(page, testInfo, 'providers-390-cleared.png');
  await providers.goto(); // gone from the database too
  await expect(providers.pause(MODEL)).toHaveCount(0);

  // the dashboard's own gate forgot it: the model is called at once, well within max_wait
  const second = await runToEnd(request, 'triage', { ticket: 'I was charged twice for my March invoice' });
  expect(second.status).toBe('succeeded');
  const [answered] = await classifyAttempts(page, second.id);
  expect(answered).toMatchObject({ model: MODEL, outcome: 'ok' });
  expect(answered!.transport).toHaveLength(1);
  expect(answered!.transport[0]!.waitedMs).toBeLessThan(1000);
});
