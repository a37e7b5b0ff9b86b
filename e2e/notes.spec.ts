import { expect, test, type Locator, type Page } from '@playwright/test';
import { GEMINI, GPT, loadScripts, resetScripts, runToEnd } from './sim';
import { openPage } from './pages/open';
import { shoot } from './pages/shoot';

// Notes on a run page and its copy-link buttons. Works signed in (the suite's editor) and on an
// open dashboard (no account): the note's author is whoever this page writes as.

test.afterEach(async ({ request }) => {
  await resetScripts(request);
});

/** A finished triage run whose classify node has two attempts: an error, then the fallback's answer. */
async function twoAttemptRun(request: Parameters<typeof loadScripts>[0]): Promise<string> {
  await loadScripts(request, { [GEMINI]: [{ kind: 'provider_error' }], [GPT]: [{ kind: 'ok' }] });
  const { id } = await runToEnd(request, 'triage', { ticket: 'notes spec: my invoice is wrong' });
  return id;
}

const runThread = (page: Page) => page.locator('[data-testid="note-thread"][data-kind="run"]');
const attempt = (page: Page, node: string, seq: number) => page.locator(`#attempt-${node}-${seq}`);

async function addNote(thread: Locator, text: string) {
  await thread.getByTestId('note-add').last().click();
  await thread.getByTestId('note-form').locator('textarea').fill(text);
  await thread.getByTestId('note-save').click();
  await expect(thread.getByTestId('note-form')).toHaveCount(0);
}

test('a note is markdown shown safely; its author edits and deletes it; an oversize note is refused with a clear error', async ({ page, request }, testInfo) => {
  const runId = await twoAttemptRun(request);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, `/runs/${runId}`);

  const thread = runThread(page);
  await expect(thread).toContainText('No notes on this run yet');
  await addNote(thread, 'Cut off at **max_tokens** <script>alert(1)</script> <img src=x onerror="alert(2)"> see [the policy](https://example.com/p)');
  const note = thread.getByTestId('note');
  await expect(note).toHaveCount(1);
  const body = note.getByTestId('note-body');
  // raw HTML is shown as the text it is: no element made of it, nothing run
  await expect(body).toContainText('<script>alert(1)</script>');
  await expect(body).toContainText('<img src=x onerror="alert(2)">');
  await expect(body.locator('script, img')).toHaveCount(0);
  await expect(body.locator('strong')).toHaveText('max_tokens');
  await expect(body.getByRole('link', { name: 'the policy' })).toHaveAttribute('rel', 'noopener noreferrer nofollow');
  const author = await note.getAttribute('data-author');
  expect(author).toBeTruthy();
  await expect(note.locator('.note-author')).toHaveText(author!);

  // a note on an attempt shows on that attempt only
  const second = attempt(page, 'classify', 2);
  await addNote(second.getByTestId('note-thread'), 'the fallback _answered_');
  await expect(second.getByTestId('note')).toHaveCount(1);
  await expect(second.getByTestId('note-body').locator('em')).toHaveText('answered');
  await expect(attempt(page, 'classify', 1).getByTestId('note')).toHaveCount(0);
  await expect(page.locator('[data-node="classify"]').getByTestId('note-count')).toHaveAttribute('data-count', '1');
  await shoot(page, testInfo, 'notes-1280.png');

  // the author edits it: the new text is shown, marked edited, and survives a reload
  await note.getByTestId('note-edit').click();
  await note.locator('textarea').fill('Cut off at *max_tokens*: raise it to 2048');
  await note.getByTestId('note-save').click();
  await expect(note.getByTestId('note-body').locator('em')).toHaveText('max_tokens');
  await expect(note).toContainText('edited');
  await page.reload();
  await expect(runThread(page).getByTestId('note-body')).toContainText('raise it to 2048');

  // too long: refused by the server with the size in the message, nothing stored
  const form = runThread(page);
  await form.getByTestId('note-add').click();
  await form.locator('textarea').fill('x'.repeat(10_001));
  await expect(form.getByTestId('note-chars')).toHaveClass(/over/);
  await form.getByTestId('note-save').click();
  await expect(form.getByTestId('note-error')).toHaveAttribute('data-code', 'E_BODY');
  await expect(form.getByTestId('note-error')).toContainText('at most 10,000 characters; this one has 10,001');
  await form.getByRole('button', { name: 'Cancel' }).click();

  await page.setViewportSize({ width: 390, height: 844 });
  await expect(runThread(page).getByTestId('note')).toBeVisible();
  // the narrow layout: nothing wider than the screen
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await shoot(page, testInfo, 'notes-390.png');

  // the author deletes it, after saying yes
  const kept = runThread(page).getByTestId('note');
  await kept.getByTestId('note-delete').click();
  await kept.getByTestId('note-delete-confirm').click();
  await expect(runThread(page).getByTestId('note')).toHaveCount(0);
  await page.reload();
  await expect(runThread(page).getByTestId('note')).toHaveCount(0);
  await expect(attempt(page, 'classify', 2).getByTestId('note')).toHaveCount(1);
  expect(dialogs).toEqual([]);
});

test('a copied link opens the page scrolled to the attempt, its node opened, the attempt highlighted', async ({ page, context, request, baseURL }, testInfo) => {
  const runId = await twoAttemptRun(request);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await page.setViewportSize({ width: 1280, height: 900 });
  await openPage(page, `/runs/${runId}`);

  const copy = attempt(page, 'classify', 2).getByTestId('copy-link');
  await copy.click();
  await expect(attempt(page, 'classify', 2).getByTestId('copy-link-said')).toHaveText('Link copied');
  const url = await page.evaluate(() => navigator.clipboard.readText());
  expect(url).toBe(new URL(`/runs/${runId}#attempt-classify-2`, baseURL).href);
  // the link under the button is the same place, for "copy link address"
  expect(new URL((await copy.getAttribute('href'))!, page.url()).href).toBe(url);

  // a narrow screen, a fresh page: scrolled down to the attempt, which is highlighted
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(url);
  const target = attempt(phone, 'classify', 2);
  await expect(target).toBeInViewport();
  await expect(target).toHaveAttribute('data-link-target', '');
  expect(await phone.evaluate(() => window.scrollY)).toBeGreaterThan(0);
  await shoot(phone, testInfo, 'copy-link-390.png', { fullPage: false });
  await phone.close();

  // a collapsed node: the link opens it, then scrolls to its attempt
  const node = page.locator('[data-testid="node-row"][data-node="classify"]');
  await page.evaluate(() => window.scrollTo(0, 0));
  await node.locator('button.toggle').click();
  await expect(node.getByTestId('attempt-detail')).toHaveCount(0);
  await page.evaluate(() => (window.location.hash = ''));
  await page.evaluate((hash) => (window.location.hash = hash), 'attempt-classify-2');
  await expect(attempt(page, 'classify', 2)).toBeInViewport();
  await expect(node.locator('button.toggle')).toHaveAttribute('aria-expanded', 'true');
  await shoot(page, testInfo, 'copy-link-1280.png', { fullPage: false });
});
