import Link from 'next/link';
import { filterChoices, listRuns } from '@/db/queries';
import { RunFiltersForm } from '@/components/runs/run-filters-form';
import { RunTable } from '@/components/runs/run-table';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import { roleAllows } from '@/lib/shared/roles';
import { parseRunFilters, RUN_FILTER_KEYS, runFilterQuery } from '@/lib/dashboard/run-filters';

export const dynamic = 'force-dynamic';

type SearchParams = Record<string, string | string[] | undefined>;

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const s = await pageSession();
  const heading = <h1>Runs</h1>;
  if (!s.ok)
    return (
      <section>
        {heading}
        <ProjectProblem {...s} />
      </section>
    );
  const { db } = s.session;
  const query = runFilterQuery(sp);
  const values = Object.fromEntries(new URLSearchParams(query)) as Record<(typeof RUN_FILTER_KEYS)[number], string>;
  const parsed = parseRunFilters(sp);
  const cursor = typeof sp.cursor === 'string' ? sp.cursor : null;
  const renderedAt = Date.now();
  const [choices, page] = await Promise.all([filterChoices(db), parsed.ok ? listRuns(db, { filters: parsed.filters, limit: parsed.limit, cursor }) : null]);
  const pollQuery = [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
  return (
    <section>
      <div className="page-head">
        {heading}
        {roleAllows(s.caller.role, 'editor') ? (
          <Link href="/flows" className="button-link">
            Start a run
          </Link>
        ) : null}
      </div>
      <RunFiltersForm choices={choices} values={values} />
      {!parsed.ok ? (
        <p className="hint" role="alert">
          {parsed.error}. <Link href="/runs">Clear filters</Link>
        </p>
      ) : (
        <>
          <RunTable key={pollQuery} query={pollQuery} initial={page!} renderedAt={renderedAt} firstPage={!cursor} />
          <nav className="pager" aria-label="Pages">
            {cursor ? <Link href={query ? `/runs?${query}` : '/runs'}>← Newest</Link> : <span />}
            {page!.nextCursor ? (
              <Link href={`/runs?${[query, `cursor=${encodeURIComponent(page!.nextCursor)}`].filter(Boolean).join('&')}`} rel="next">
                Older →
              </Link>
            ) : null}
          </nav>
        </>
      )}
    </section>
  );
}
