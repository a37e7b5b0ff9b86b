import type { Locator, Page } from '@playwright/test';
import { openPage } from './open';

export class RunsPage {
  constructor(readonly page: Page) {}

  async goto(query = '') {
    await openPage(this.page, `/runs${query ? `?${query}` : ''}`);
  }

  rows(): Locator {
    return this.page.getByTestId('run-row');
  }

  /** The row of one run: the row holding a link to its page. */
  row(runId: string): Locator {
    return this.rows().filter({ has: this.page.locator(`a[href="/runs/${runId}"]`) });
  }

  filter(label: string): Locator {
    return this.page.getByRole('form', { name: 'Run filters' }).getByLabel(label);
  }
}
