// Tokens and cost. A dropped attempt's usage still counts toward the node (seed page).
import type { ReportedUsage } from '@/lib/providers/adapter';
import type { ModelPrice, UsageTotals } from './types';

export const ZERO_USAGE: UsageTotals = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: a.costUsd + b.costUsd };
}

export function sumUsage(items: readonly UsageTotals[]): UsageTotals {
  return items.reduce(addUsage, ZERO_USAGE);
}

/** The provider's own cost (`usage.cost`) when it sends one, else the catalogue price, else 0. */
export function priceUsage(u: ReportedUsage, price: ModelPrice | undefined): UsageTotals {
  const costUsd =
    u.costUsd ?? (u.inputTokens * (price?.inputPerMtok ?? 0) + u.outputTokens * (price?.outputPerMtok ?? 0)) / 1e6;
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd };
}
