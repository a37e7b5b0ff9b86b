// One rule for a rate's uncertainty, wherever a rate of successes is shown: the what-if estimate,
// measured structural limits.

/** A rate and its 95% interval. */
export interface Figure {
  value: number;
  low: number;
  high: number;
}

/** Wilson's 95% interval of k successes in n. */
export function wilson(k: number, n: number, z = 1.96): Figure {
  if (n === 0) return { value: 0, low: 0, high: 1 };
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { value: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
