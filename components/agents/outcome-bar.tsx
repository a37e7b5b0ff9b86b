// A stacked bar of attempt outcomes: how often an agent's calls end ok, error, refusal,
// truncated, or ok with an answer that failed its checks.
export interface OutcomeCounts {
  ok: number;
  invalid: number;
  error: number;
  refusal: number;
  truncated: number;
}

export function outcomeCounts(byOutcome: Record<string, number>, byCause: Record<string, number>): OutcomeCounts {
  const invalid = byCause.invalid_output ?? 0;
  return { ok: Math.max((byOutcome.ok ?? 0) - invalid, 0), invalid, error: byOutcome.error ?? 0, refusal: byOutcome.refusal ?? 0, truncated: byOutcome.truncated ?? 0 };
}

const LABEL: Record<keyof OutcomeCounts, string> = { ok: 'ok', invalid: 'invalid output', error: 'error', refusal: 'refusal', truncated: 'truncated' };

export function OutcomeBar({ counts }: { counts: OutcomeCounts }) {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (!total) return <span className="muted">no attempts yet</span>;
  return (
    <span className="outcome-bar" title={(Object.keys(counts) as (keyof OutcomeCounts)[]).map((k) => `${LABEL[k]} ${counts[k]}`).join(' · ')}>
      {(Object.keys(counts) as (keyof OutcomeCounts)[])
        .filter((k) => counts[k] > 0)
        .map((k) => (
          <span key={k} className={`o-${k}`} style={{ width: `${(counts[k] / total) * 100}%` }} />
        ))}
    </span>
  );
}
