// The list of the docs' pages beside a page (above it on a phone, as a link to the index only).
import Link from 'next/link';

export function DocsSide({ pages, current }: { pages: { page: string; title: string }[]; current?: string }) {
  return (
    <nav className="docs-side" aria-label="Docs pages">
      <p className="docs-side-title">
        <Link href="/docs">← All docs</Link>
      </p>
      <ul>
        {pages.map((p) => (
          <li key={p.page}>
            <Link href={`/docs/${p.page}`} aria-current={p.page === current ? 'page' : undefined}>
              {p.title}
            </Link>
          </li>
        ))}
        <li>
          <Link href="/docs/api" aria-current={current === 'api' ? 'page' : undefined}>
            The HTTP API reference
          </Link>
        </li>
      </ul>
    </nav>
  );
}
