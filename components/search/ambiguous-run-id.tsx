// A short id (or prefix) in a run page's URL that starts more than one run's id: the runs it could
// mean, to pick from, never one of them guessed (DESIGN: The dashboard, "Short run ids and search").
import Link from 'next/link';
import type { RunIdMatch } from '@/db/run-id-queries';
import { RUN_STATUS_NOTES } from '@/lib/dashboard/run-status';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import '@/app/styles/search.css';
import { runHref } from '@/lib/dashboard/run-anchors';
import { ambiguousRunIdWords } from '@/lib/shared/short-id';

/** `hrefOf`: where a choice leads (default its run page; the replay preview passes its own page's address) */
export function AmbiguousRunId({ prefix, matches, more, hrefOf = runHref }: { prefix: string; matches: RunIdMatch[]; more: boolean; hrefOf?: (runId: string) => string }) {
  return (
    <section data-testid="ambiguous-run-id">
      <nav className="crumbs">
        <Link href="/runs">← Runs</Link>
      </nav>
      <h1>Which run?</h1>
      <p className="muted">
        <span className="mono">{prefix}</span> {ambiguousRunIdWords(matches.length, more)}. Pick one, or give more of the id.
      </p>
      <ul className="run-choices">
        {matches.map((m) => (
          <li key={m.id} data-testid="run-choice">
            <Link href={hrefOf(m.id)} className="mono run-choice-id">
              {m.id}
            </Link>
            <strong>{m.flow}</strong>
            <StatusBadge status={m.status} title={RUN_STATUS_NOTES[m.status]} />
            {m.kind !== 'flow' ? <span className="tag">{m.kind}</span> : null}
            <span className="muted small">
              <LocalTime ms={m.startedAt} withDate />
            </span>
          </li>
        ))}
      </ul>
      {more ? <p className="muted small">… and more: the newest {matches.length} are listed.</p> : null}
    </section>
  );
}
