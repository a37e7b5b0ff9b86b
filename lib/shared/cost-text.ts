/**
 * USD, one rule for every cost a person reads (dashboard pages, replay messages): three significant
 * digits, and never less precise than a cent — $0.0000412, $0.000260, $0.0421, $0.500, $12.50,
 * $1,234.56. Zeros are kept, so costs side by side read alike; at most nine decimals (costs are
 * rounded to a nano-dollar, roundCost).
 */
export function fmtCost(usd: number | null | undefined): string {
  if (usd == null || !Number.isFinite(usd)) return '—';
  if (usd === 0) return '$0';
  const abs = Math.abs(usd);
  const decimals = Math.min(9, Math.max(2, 2 - Math.floor(Math.log10(abs))));
  const [int, frac] = abs.toFixed(decimals).split('.');
  return `${usd < 0 ? '-' : ''}$${int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
}
