// The link from a failed run's or node's hint to its error code's reference (/docs/errors#CODE), when
// docs/errors.md has a section for that code (`codes`, read on the server); nothing otherwise.
import { errorDocHref } from '@/lib/dashboard/docs';

export function ErrorDocLink({ code, codes }: { code: string | null | undefined; codes: readonly string[] }) {
  const href = errorDocHref(code, codes);
  return href ? (
    <>
      {' '}
      {/* a document load, not a client-side one: the browser scrolls to the section and marks it :target */}
      <a href={href} className="error-doc-link" data-testid="error-doc-link">
        What {code} means →
      </a>
    </>
  ) : null;
}
