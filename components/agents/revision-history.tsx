// The agent's policy revisions, newest first: each with its diff and the whole file as written.
import type { PolicyRevisionView } from '@/lib/dashboard/agent-types';
import { parseUnifiedDiff, type UnifiedLine } from '@/lib/dashboard/line-diff';
import { LocalTime } from '@/components/ui/local-time';

const OP: Record<UnifiedLine['kind'], string> = { same: ' ', add: '+', del: '-', hunk: '', file: '' };

/**
 * One row per line, a block of its own, so a line after a +/- line keeps its leading spaces: its
 * number in the file (drawn from data-no, so a copied diff is the diff's text), + or -, then the
 * line as written, wrapped under itself when long.
 */
function Diff({ text }: { text: string }) {
  if (!text) return <p className="muted">No change.</p>;
  return (
    <pre className="diff" data-testid="revision-diff">
      {parseUnifiedDiff(text).map((l, i) =>
        l.kind === 'hunk' || l.kind === 'file' ? (
          <span key={i} className={`d-row d-${l.kind}`}>
            {l.text}
          </span>
        ) : (
          <span key={i} className={`d-row d-line d-${l.kind}`} data-kind={l.kind} data-no={l.lineNo ?? undefined}>
            <span className="d-op">{OP[l.kind]}</span>
            <span className="d-text">{l.text}</span>
          </span>
        ),
      )}
    </pre>
  );
}

export function RevisionHistory({ revisions }: { revisions: PolicyRevisionView[] }) {
  if (!revisions.length) return <p className="muted">No revision yet: saving the form records one.</p>;
  return (
    <ol className="revisions">
      {revisions.map((r, i) => (
        <li key={r.id} data-testid="policy-revision" data-revision={r.revision}>
          <details open={i === 0}>
            <summary>
              <strong>Revision {r.revision}</strong> <span className="muted">·</span> <LocalTime ms={r.createdAt} withDate />
              {r.author ? (
                <>
                  {' '}
                  <span className="muted">by</span> <span data-testid="revision-author">{r.author}</span>
                </>
              ) : null}
            </summary>
            <Diff text={r.diff} />
            <details className="io">
              <summary>File as written</summary>
              <pre>{r.yaml}</pre>
            </details>
          </details>
        </li>
      ))}
    </ol>
  );
}
