// The audit trail, newest first (DESIGN: The dashboard, "Audit trail"): when, what, who, from
// where, to what, and the event's few facts. On a phone each row is a card.
import type { AuditRow } from '@/db/audit-queries';
import { LocalTime } from '@/components/ui/local-time';
import '@/app/styles/audit.css';

function fact(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function AuditTable({ rows, labels, refusals }: { rows: AuditRow[]; labels: Record<string, string>; refusals: ReadonlySet<string> }) {
  return (
    <div className="table-scroll">
      <table className="grid audit">
        <thead>
          <tr>
            <th>When</th>
            <th>Event</th>
            <th>Actor</th>
            <th>Address</th>
            <th>Target</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="audit-row" data-kind={r.kind} data-actor={r.actor ?? ''} className={refusals.has(r.kind) ? 'audit-refused' : undefined}>
              <td className="c-at">
                <LocalTime ms={r.at} withDate />
              </td>
              <td className="c-kind">
                <span className="audit-kind">{labels[r.kind] ?? r.kind}</span> <code className="muted">{r.kind}</code>
              </td>
              <td className="c-actor" data-testid="audit-actor">
                {r.actor ?? (
                  <span className="muted" title="nobody was signed in (the dashboard open, or a sign-in refused)">
                    nobody
                  </span>
                )}
              </td>
              <td className="c-address mono">{r.address ?? <span className="muted">—</span>}</td>
              <td className="c-target">{r.target ?? <span className="muted">—</span>}</td>
              <td className="c-detail">
                {r.detail
                  ? Object.entries(r.detail).map(([k, v]) => (
                      <span key={k} className="audit-fact">
                        <span className="muted">{k}</span> {fact(v)}
                      </span>
                    ))
                  : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
