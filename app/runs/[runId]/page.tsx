import Link from 'next/link';
import { notFound } from 'next/navigation';
import { getRunFacts } from '@/db/queries';
import { CancelRunButton } from '@/components/runs/cancel-run-button';
import { RunView } from '@/components/runs/run-view';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import { roleAllows } from '@/lib/shared/roles';

export const dynamic = 'force-dynamic';

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const s = await pageSession();
  if (!s.ok) return <ProjectProblem {...s} />;
  const facts = await getRunFacts(s.session.db, runId);
  if (!facts) notFound();
  return (
    <section>
      <div className="page-actions">
        <nav className="crumbs">
          <Link href="/runs">← Runs</Link>
        </nav>
        {facts.status === 'queued' && roleAllows(s.caller.role, 'editor') ? <CancelRunButton runId={runId} /> : null}
      </div>
      <RunView initial={facts} renderedAt={Date.now()} />
    </section>
  );
}
