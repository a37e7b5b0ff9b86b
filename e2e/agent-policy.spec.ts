import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { EDITOR } from './accounts';
import { AgentPage } from './pages/agent-page';
import { e2eProjectDir } from './project-dir';

const classifierFile = () => join(e2eProjectDir(), 'agents', 'classifier.yaml');

test('the classifier policy form rejects fallback without fallback models, then saves a valid change', async ({ page }) => {
  const before = readFileSync(classifierFile(), 'utf8');
  expect(before).toMatch(/retries: 3/);
  const agent = new AgentPage(page);
  await agent.goto('classifier');
  await expect(agent.field('On error')).toHaveValue('fallback');
  await expect(agent.fallbackModels()).toHaveCount(1);

  // on_error is "fallback": with no fallback model left the form says E_OUTCOME_FALLBACK
  await agent.removeAllFallbackModels();
  await expect(agent.fieldError('E_OUTCOME_FALLBACK')).toBeVisible();
  await agent.save();
  await expect(agent.fieldError('E_OUTCOME_FALLBACK')).toBeVisible();
  await expect(agent.saveStatus()).toHaveCount(0);
  expect(readFileSync(classifierFile(), 'utf8')).toBe(before);
  await expect(agent.revisions()).toHaveCount(0);

  // back to the file as it is, then a valid change: retries 3 → 2
  await agent.goto('classifier');
  await expect(agent.fallbackModels()).toHaveCount(1);
  await agent.field('Retries').fill('2');
  await agent.save();
  await expect(agent.saveStatus()).toHaveText(/Saved as revision 1/);
  await expect(agent.revisions()).toHaveCount(1);
  await expect(agent.revisions().first()).toContainText('-  retries: 3');
  await expect(agent.revisions().first()).toContainText('+  retries: 2');
  // who saved it: the signed-in editor
  await expect(agent.revisions().first().getByTestId('revision-author')).toHaveText(EDITOR);

  const after = readFileSync(classifierFile(), 'utf8');
  expect(after).toMatch(/^ {2}retries: 2$/m);
  // the comment and every key the form does not show are kept
  expect(after).toContain('# AQVEN validates the output and repairs it');
  expect(after).toContain('system: "You sort support tickets');
  expect(after.replace('retries: 2', 'retries: 3')).toBe(before);

  // the page, read afresh, shows the saved policy and its revision
  await agent.goto('classifier');
  await expect(agent.field('Retries')).toHaveValue('2');
  await expect(agent.revisions()).toHaveCount(1);

  // put the showcase value back, so other specs see the classifier as shipped
  await agent.field('Retries').fill('3');
  await agent.save();
  await expect(agent.saveStatus()).toHaveText(/Saved as revision 2/);
  expect(readFileSync(classifierFile(), 'utf8')).toBe(before);
});
