import Link from 'next/link';
import { auditActors, listAudit } from '@/db/audit-queries';
import { AuditFilters } from '@/components/audit/audit-filters';
import { AuditTable } from '@/components/audit/audit-table';
import { ProjectProblem } from '@/components/ui/project-problem';
import { AUDIT_KIND_LABELS, AUDIT_KINDS, AUDIT_RANGE_LABELS, AUDIT_REFUSALS, auditQueryString, encodeAuditCursor, parseAuditQuery } from '@/lib/dashboard/audit-filters';
import { pageSession } from '@/lib/server/page-session';

export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

/** The audit trail (DESIGN: The dashboard, "Audit trail"): admins only (pageCaller('admin'), through pageSession). */
export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const s = await pageSession('admin');
  const heading = <h1>Audit</h1>;
  if (!s.ok)
    return (
      <section>
        {heading}
        <ProjectProblem {...s} />
      </section>
    );
  const { db } = s.session;
  const parsed = parseAuditQuery(sp);
  const [actors, page] = await Promise.all([auditActors(db), parsed.ok ? listAudit(db, parsed.filter) : null]);
  const base = auditQueryString(parsed.values);
  const cursor = typeof sp.cursor === 'string' ? sp.cursor : null;
  return (
    <section className="audit-page">
      <div className="page-head">{heading}</div>
      <p className="muted description">
        Who did what, from where: sign-ins, password and user changes, tokens, policy saves, project pushes, replay batches, cleared pauses. Never a password, a token or a key.
        Kept as long as the runs (<code>aqven runs purge</code>).
      </p>
      <AuditFilters
        values={parsed.values}
        actors={actors}
        kinds={AUDIT_KINDS.map((k): [string, string] => [k, `${AUDIT_KIND_LABELS[k]} (${k})`])}
        ranges={Object.entries(AUDIT_RANGE_LABELS)}
      />
      {!parsed.ok ? (
        <p className="hint" role="alert">
          {parsed.error}. <Link href="/audit">Clear filters</Link>
        </p>
      ) : page!.rows.length === 0 ? (
        <p className="empty" data-testid="no-audit">
          {cursor ? 'No older events.' : base ? 'No event matches these filters.' : 'Nothing recorded yet.'}
        </p>
      ) : (
        <AuditTable rows={page!.rows} labels={AUDIT_KIND_LABELS} refusals={AUDIT_REFUSALS} />
      )}
      {parsed.ok ? (
        <nav className="pager" aria-label="Pages">
          {cursor ? <Link href={base ? `/audit?${base}` : '/audit'}>← Newest</Link> : <span />}
          {page!.next ? (
            <Link href={`/audit?${auditQueryString(parsed.values, encodeAuditCursor(page!.next))}`} rel="next" data-testid="audit-older">
              Older →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
