import type { Locator, Page } from '@playwright/test';

export class FlowsPage {
  constructor(readonly page: Page) {}

  async goto() {
    await this.page.goto('/flows');
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

  /** Types the input once React has the form: text typed while it hydrates can land beside the example. */
  async start(flow: string, input: unknown) {
    await this.form(flow).and(this.page.locator('[data-hydrated]')).waitFor();
    await this.input(flow).fill(typeof input === 'string' ? input : JSON.stringify(input));
    await this.form(flow).getByRole('button', { name: `Run ${flow}` }).click();
  }
}
