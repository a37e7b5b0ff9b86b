// Status of a run or a node, coloured the same way everywhere.
export function StatusBadge({ status, testId, title }: { status: string; testId?: string; title?: string }) {
  return (
    <span className={`status status-${status}`} data-testid={testId} title={title}>
      {status === 'running' ? <span className="pulse" aria-hidden /> : null}
      {status}
    </span>
  );
}

/** An attempt outcome chip: ok green, error red, refusal purple, truncated amber, invalid orange. */
export function OutcomeChip({ outcome, label }: { outcome: string; label?: string }) {
  return <span className={`chip o-${outcome}`}>{label ?? outcome}</span>;
}
