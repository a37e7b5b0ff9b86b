import type { Locator, Page } from '@playwright/test';
import { openPage } from './open';

export class AgentPage {
  constructor(readonly page: Page) {}

  async goto(name: string) {
    await openPage(this.page, `/agents/${name}`);
  }

  field(label: 'Model' | 'Retries' | 'On error' | 'On refusal' | 'On truncated' | 'Strict'): Locator {
    return this.page.getByLabel(label, { exact: true });
  }

  fallbackModels(): Locator {
    return this.page.getByRole('group', { name: 'Fallback models' }).getByLabel(/^Fallback model \d+$/);
  }

  async removeAllFallbackModels() {
    const remove = this.page.getByRole('button', { name: /^Remove fallback model/ });
    while ((await remove.count()) > 0) await remove.first().click();
  }

  fieldError(code: string): Locator {
    return this.page.locator(`[data-testid="field-error"][data-code="${code}"]`);
  }

  async save() {
    await this.page.getByRole('button', { name: 'Save policy' }).click();
  }

  saveStatus(): Locator {
    return this.page.getByTestId('save-status');
  }

  revisions(): Locator {
    return this.page.getByTestId('policy-revision');
  }
}
