// The hits of a history search (DESIGN: The dashboard, "Short run ids and search"): each names its
// run (short id, flow, status, start) and where the words are, shows them marked in their text,
// and links to the run — to the node, or the attempt, whose output or failure it is.
import Link from 'next/link';
import type { SearchHit } from '@/db/search-queries';
import { runHref } from '@/lib/dashboard/run-anchors';
import { RUN_STATUS_NOTES } from '@/lib/dashboard/run-status';
import { shortRunId } from '@/lib/shared/short-id';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';

/** The run page of a hit, opened on its node or attempt when the words are in one. */
export function hitHref(h: Pick<SearchHit, 'runId' | 'nodeId' | 'attemptSeq'>): string {
  return runHref(h.runId, h.nodeId === null ? undefined : { node: h.nodeId, seq: h.attemptSeq });
}

function where(h: SearchHit): string {
  if (h.field === 'id') return 'run id';
  if (h.field === 'input') return 'input';
  const node = h.nodeId ?? 'the run';
  if (h.field === 'output') return `output of ${node}`;
  return h.attemptSeq === null ? `error in ${node}` : `error in ${node}, attempt #${h.attemptSeq}`;
}

export function SearchHits({ hits }: { hits: SearchHit[] }) {
  return (
    <ol className="search-hits">
      {hits.map((h) => (
        <li key={`${h.field}:${h.runId}`} className="search-hit" data-testid="search-hit" data-run={h.runId} data-field={h.field}>
          <Link href={hitHref(h)} className="search-hit-link">
            <span className="search-hit-head">
              <span className="mono search-hit-id" title={h.runId}>
                {shortRunId(h.runId)}
              </span>
              <strong className="search-hit-flow">{h.flow}</strong>
              <StatusBadge status={h.status} title={RUN_STATUS_NOTES[h.status]} />
              {h.kind !== 'flow' ? <span className="tag">{h.kind}</span> : null}
              <span className={`search-field field-${h.field}`}>{where(h)}</span>
              <span className="muted small search-hit-time">
                <LocalTime ms={h.startedAt} withDate />
              </span>
            </span>
            <span className={`search-snippet${h.field === 'id' ? ' mono' : ''}`}>
              {h.snippet.map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>))}
            </span>
          </Link>
        </li>
      ))}
    </ol>
  );
}
