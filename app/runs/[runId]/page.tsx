import Link from 'next/link';
import { notFound, redirect } from 'next/navigation';
import { listNotes } from '@/db/note-queries';
import { getRunFacts } from '@/db/queries';
import { resolveRunId } from '@/db/run-id-queries';
import { CancelRunButton } from '@/components/runs/cancel-run-button';
import { NotesProvider } from '@/components/notes/notes-context';
import { NoteThread } from '@/components/notes/note-thread';
import { ReplayAccess } from '@/components/replay/replay-access';
import { ReplayPanel } from '@/components/replay/replay-panel';
import { RunView } from '@/components/runs/run-view';
import { AmbiguousRunId } from '@/components/search/ambiguous-run-id';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import { runPageExtras } from '@/lib/server/run-page';
import { replayContext } from '@/lib/server/replay';
import { roleAllows } from '@/lib/shared/roles';
import { noteAuthor } from '@/lib/contracts/add-note';
import '@/app/styles/notes.css';
import '@/app/styles/replay.css';
import '@/app/styles/run-page.css';
import { runHref } from '@/lib/dashboard/run-anchors';

export const dynamic = 'force-dynamic';

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  const s = await pageSession();
  if (!s.ok) return <ProjectProblem {...s} />;
  const facts = await getRunFacts(s.session.db, runId);
  if (!facts) {
    // a short id or prefix: the run it names, or the runs it could mean (never a guess)
    const named = await resolveRunId(s.session.db, runId);
    if (named.kind === 'found') redirect(runHref(named.id));
    if (named.kind === 'ambiguous') return <AmbiguousRunId prefix={runId} matches={named.matches} more={named.more} />;
    notFound();
  }
  const notes = (await listNotes(s.session.db, runId)) ?? [];
  const replay = await replayContext(runId);
  const extras = await runPageExtras(s.session, facts);
  return (
    <section>
      <div className="page-actions">
        <nav className="crumbs">
          <Link href="/runs">← Runs</Link>
        </nav>
        {facts.status === 'queued' && roleAllows(s.caller.role, 'editor') ? <CancelRunButton runId={runId} /> : null}
      </div>
      <NotesProvider runId={runId} me={noteAuthor(s.caller.author)} initial={notes} renderedAt={Date.now()}>
        <ReplayPanel ctx={replay} run={facts} renderedAt={Date.now()} />
        <ReplayAccess runId={runId} canReplay={roleAllows(s.caller.role, 'editor')}>
          <RunView initial={facts} renderedAt={Date.now()} {...extras} />
        </ReplayAccess>
        <NoteThread />
      </NotesProvider>
    </section>
  );
}
