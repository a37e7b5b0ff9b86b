// /search?q=…: the run history searched (DESIGN: The dashboard, "Short run ids and search"): run
// inputs, node outputs and failure text as stored (redacted), and runs by id prefix; newest first.
import Link from 'next/link';
import { searchHistory } from '@/db/search-queries';
import { SearchHits } from '@/components/search/search-hits';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import '@/app/styles/search.css';

export const dynamic = 'force-dynamic';

const PAGE = 25;

type Params = Promise<{ q?: string | string[]; before?: string | string[] }>;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export default async function SearchPage({ searchParams }: { searchParams: Params }) {
  const sp = await searchParams;
  const q = (one(sp.q) ?? '').slice(0, 500);
  const beforeText = one(sp.before);
  const before = beforeText && /^\d{1,15}$/.test(beforeText) ? Number(beforeText) : null;
  const s = await pageSession();
  if (!s.ok) return <ProjectProblem {...s} />;
  const page = q.trim() ? await searchHistory(s.session.db, { q, before, limit: PAGE }) : null;
  const link = (b: number | null) => `/search?${new URLSearchParams(b === null ? { q } : { q, before: String(b) })}`;
  return (
    <section className="search-page">
      <div className="page-head">
        <h1>Search</h1>
        {page ? (
          <span className="muted" data-testid="search-summary">
            {page.hits.length === 0 ? 'no runs' : `${page.hits.length}${page.nextBefore !== null ? '+' : ''} ${page.hits.length === 1 ? 'hit' : 'hits'}`} for{' '}
            <q className="search-q">{q.trim()}</q>
            {before !== null ? ', older text' : null}
          </span>
        ) : null}
      </div>
      {page === null ? (
        <form action="/search" role="search" className="search-page-form" aria-label="Search the run history">
          <input type="search" name="q" placeholder="refund overloaded*   or   3f2a9c1e" aria-label="Search runs" autoFocus maxLength={500} />
          <button type="submit">Search</button>
        </form>
      ) : page.hits.length ? (
        <SearchHits hits={page.hits} />
      ) : (
        <p className="empty" data-testid="search-empty">
          {page.words.length ? 'No run input, node output or failure text holds every one of these words.' : 'No run id starts with this.'}
        </p>
      )}
      {page && (before !== null || page.nextBefore !== null) ? (
        <nav className="pager" aria-label="More hits">
          {before !== null ? <Link href={link(null)}>← Newest</Link> : <span />}
          {page.nextBefore !== null ? (
            <Link href={link(page.nextBefore)} data-testid="search-older">
              Older text →
            </Link>
          ) : null}
        </nav>
      ) : null}
      <details className="search-help" open={page === null}>
        <summary>How search reads your words</summary>
        <ul>
          <li>
            Every word must be there, in any order; case and accents aside (<code>Café</code> finds <code>cafe</code>).
          </li>
          <li>
            <code>refund*</code> also finds <code>refunds</code>, <code>refunded</code> (two letters or more before the <code>*</code>).
          </li>
          <li>Quotes, AND, OR, NOT and other signs are read as plain words or left out: no syntax to get wrong.</li>
          <li>
            A run id, a prefix of it (4 characters or more), or its short id — the 8 characters shown for a run, from the end of its id — lists the runs it names;{' '}
            <code>/runs/3f2a9c1e</code> opens a run by its short id.
          </li>
          <li>
            Searched: each run&apos;s input, each node&apos;s output and each failure&apos;s text, up to their first 8,192 characters. Failure text is stored redacted: an email
            address is kept only as <code>&lt;EMAIL&gt;</code>, so it cannot be found by the address.
          </li>
          <li>One hit per run and place (input, output, error), newest text first.</li>
        </ul>
      </details>
    </section>
  );
}
