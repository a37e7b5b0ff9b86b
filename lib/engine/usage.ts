// Tokens and cost. A dropped attempt's usage still counts toward the node (DESIGN: Outcome
// policies, repair and budgets). The engine sums exactly; what is stored and shown is rounded once,
// by `roundCost`, so a live sum and one read back from the database print the same.
import type { ReportedUsage } from './adapter';
import type { CostSource, ModelPrice, UsageTotals } from './types';

export const ZERO_USAGE: UsageTotals = Object.freeze({ inputTokens: 0, outputTokens: 0, costUsd: 0 });

export function addUsage(a: UsageTotals, b: UsageTotals): UsageTotals {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, costUsd: a.costUsd + b.costUsd };
}

/** The exact sum, cost unrounded: what the engine reports on an attempt and a node. */
export function sumUsage(items: readonly UsageTotals[]): UsageTotals {
  return items.reduce(addUsage, ZERO_USAGE);
}

/**
 * The one rounding rule for a cost in USD: to 1e-9 (a nano-dollar), far below any price step,
 * enough to hide the floating-point noise of a sum (0.1 + 0.2). Used by the run record and the
 * database's aggregates alike.
 */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/** `sumUsage` with the cost rounded by `roundCost`: for what is stored and displayed. */
export function sumUsageRounded(items: readonly UsageTotals[]): UsageTotals {
  const u = sumUsage(items);
  return { ...u, costUsd: roundCost(u.costUsd) };
}

/** The provider's own cost (`usage.cost`) when it sends one, else the catalogue price, else 0. */
export function priceUsage(u: ReportedUsage, price: ModelPrice | undefined): UsageTotals {
  const costUsd = u.costUsd ?? (u.inputTokens * (price?.inputPerMtok ?? 0) + u.outputTokens * (price?.outputPerMtok ?? 0)) / 1e6;
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, costUsd };
}

/** Whether the catalogue prices both input and output of a model. */
export function priced(price: ModelPrice | undefined): boolean {
  return price?.inputPerMtok !== undefined && price.outputPerMtok !== undefined;
}

/**
 * Whose price an attempt's cost is, over its tries: `provider` when every try that reported tokens
 * stated its charge, `catalogue` when the catalogue priced some; `none` when some try's tokens had
 * neither (an unpriced model: its cost is unknown, never $0); null when no try reported anything.
 */
export function costSourceOf(tries: readonly ReportedUsage[], price: ModelPrice | undefined): CostSource {
  const billed = tries.filter((u) => u.costUsd !== null || u.inputTokens > 0 || u.outputTokens > 0);
  if (billed.length === 0) return null;
  if (billed.every((u) => u.costUsd !== null)) return 'provider';
  return priced(price) ? 'catalogue' : 'none';
}

/** The reasoning tokens stated over an attempt's tries; undefined when no try stated any. */
export function reasoningOf(tries: readonly ReportedUsage[]): number | undefined {
  const stated = tries.filter((u) => u.reasoningTokens !== undefined);
  return stated.length ? stated.reduce((n, u) => n + (u.reasoningTokens ?? 0), 0) : undefined;
}
