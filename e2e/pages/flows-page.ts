import type { Locator, Page } from '@playwright/test';
import { openPage } from './open';

export class FlowsPage {
  constructor(readonly page: Page) {}

  async goto() {
    await openPage(this.page, '/flows');
  }

  form(flow: string): Locator {
    return this.page.locator(`[data-testid="start-run-form"][data-flow="${flow}"]`);
  }

  input(flow: string): Locator {
    return this.form(flow).getByLabel('Input (JSON)');
  }

  fieldError(flow: string): Locator {
    return this.form(flow).getByTestId('field-error');
  }

  async start(flow: string, input: unknown) {
    await this.input(flow).fill(typeof input === 'string' ? input : JSON.stringify(input));
    await this.form(flow)
      .getByRole('button', { name: `Run ${flow}` })
      .click();
  }
}
