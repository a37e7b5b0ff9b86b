import type { Locator, Page } from '@playwright/test';
import { openPage } from './open';

export class ProvidersPage {
  constructor(readonly page: Page) {}

  async goto() {
    await openPage(this.page, '/providers');
  }

  /** the rate-limit pause of one model string, e.g. "openrouter:google/gemini-2.5-flash-lite" */
  pause(model: string): Locator {
    return this.page.locator(`[data-testid="rate-limit-pause"][data-model="${model}"]`);
  }

  origin(model: string): Locator {
    return this.pause(model).getByTestId('pause-origin');
  }

  clearButton(model: string): Locator {
    return this.pause(model).getByTestId('clear-pause');
  }

  cleared(): Locator {
    return this.page.getByTestId('pause-cleared');
  }
}
