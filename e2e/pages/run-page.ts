import type { Locator, Page } from '@playwright/test';
import { openPage } from './open';

export class RunPage {
  constructor(readonly page: Page) {}

  async goto(runId: string) {
    await openPage(this.page, `/runs/${runId}`);
  }

  status(): Locator {
    return this.page.getByTestId('run-status');
  }

  errorHint(): Locator {
    return this.page.getByTestId('error-hint');
  }

  node(id: string): Locator {
    return this.page.locator(`[data-testid="node-row"][data-node="${id}"]`);
  }

  attemptBars(node: string): Locator {
    return this.node(node).getByTestId('attempt-bar');
  }

  attemptDetails(node: string): Locator {
    return this.node(node).getByTestId('attempt-detail');
  }

  gauge(node: string, model: string): Locator {
    return this.node(node).locator(`[data-testid="budget-gauge"][data-model="${model}"]`);
  }

  chain(node: string): Locator {
    return this.node(node).getByTestId('fallback-chain');
  }

  chainModel(node: string, model: string): Locator {
    return this.chain(node).locator(`[data-testid="chain-model"][data-model="${model}"]`);
  }
}
