// The agent's policy revisions, newest first: each with its diff and the whole file as written.
import type { PolicyRevisionView } from '@/lib/dashboard/agent-types';
import { LocalTime } from '@/components/ui/local-time';

function Diff({ text }: { text: string }) {
  if (!text) return <p className="muted">No change.</p>;
  return (
    <pre className="diff">
      {text.split('\n').map((l, i) => (
        <span key={i} className={l.startsWith('@@') ? 'd-hunk' : l.startsWith('+++') || l.startsWith('---') ? 'd-file' : l.startsWith('+') ? 'd-add' : l.startsWith('-') ? 'd-del' : undefined}>
          {l}
          {'\n'}
        </span>
      ))}
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
