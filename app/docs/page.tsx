import Link from 'next/link';
import { pageSession } from '@/lib/server/page-session';
import { docIndex } from '@/lib/server/docs';
import '@/app/styles/docs.css';

export const dynamic = 'force-dynamic';

/** The user docs' index (DESIGN: The dashboard, "Docs"): the pages of docs/ written for users, in the README's order. */
export default async function DocsIndexPage() {
  // the same sign-in rule as every page; the docs need no valid project (they explain how to fix one)
  await pageSession();
  const pages = docIndex();
  return (
    <section className="doc-page docs-index">
      <h1>Docs</h1>
      <p className="muted">
        The user docs of AQVEN, as in the repository&apos;s <code>docs/</code> folder. Start with <Link href="/docs/getting-started">Getting started</Link>; an error code&apos;s
        meaning and fix is in <Link href="/docs/errors">the error reference</Link> (or run <code>aqven explain CODE</code>).
      </p>
      <ul data-testid="docs-index">
        {pages.map((p) => (
          <li key={p.page}>
            <Link href={`/docs/${p.page}`}>{p.title}</Link>
          </li>
        ))}
        <li>
          <Link href="/docs/api">The HTTP API reference</Link> <span className="muted">(from the OpenAPI document at /api/openapi.json)</span>
        </li>
      </ul>
    </section>
  );
}
