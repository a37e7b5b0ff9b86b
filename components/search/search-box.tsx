'use client';
// The search box of the top bar (DESIGN: The dashboard, "Short run ids and search"): a GET form to
// /search, so a search is a URL to share; on /search it shows the words searched for.
import Form from 'next/form';
import { usePathname, useSearchParams } from 'next/navigation';
import { Suspense } from 'react';
import '@/app/styles/search.css';

export function SearchBox() {
  // the query string is known only in the browser for a page rendered ahead of time
  return (
    <Suspense fallback={<Box q="" />}>
      <BoxOnPage />
    </Suspense>
  );
}

function BoxOnPage() {
  const path = usePathname();
  const params = useSearchParams();
  const q = path === '/search' ? (params.get('q') ?? '') : '';
  // a new search (back, forward, a link) shows its own words
  return <Box key={q} q={q} />;
}

function Box({ q }: { q: string }) {
  return (
    <Form action="/search" role="search" className="search-box" aria-label="Search the run history">
      <input
        type="search"
        name="q"
        defaultValue={q}
        placeholder="Search runs or a run id"
        aria-label="Search runs: words of inputs, outputs and errors, or a run id"
        maxLength={500}
        autoComplete="off"
        spellCheck={false}
        enterKeyHint="search"
        data-testid="search-box"
      />
      <button type="submit" className="search-go" aria-label="Search" title="Search">
        <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
          <circle cx="7" cy="7" r="4.6" fill="none" stroke="currentColor" strokeWidth="1.8" />
          <path d="M10.4 10.4 14 14" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
        </svg>
      </button>
    </Form>
  );
}
