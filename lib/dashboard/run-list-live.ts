// How the run list's first page grows as runs start (DESIGN: The dashboard, /runs): pure, so the
// hook that polls (components/runs/use-runs.ts) and its test share the rule.
import type { RunListItem } from '@/db/queries';

/** `a` comes before `b` in the list, or is `b` (newest first, by (started_at, id), as the cursor orders) */
const atOrBefore = (a: RunListItem, b: RunListItem) => a.startedAt > b.startedAt || (a.startedAt === b.startedAt && a.id >= b.id);

/**
 * The first page as it grows: every run newer than the server's page, down to the page's last row.
 * The rows below it stay the next page's (its "Older" cursor is the server's), so no run falls
 * between two pages however many start meanwhile. Without a next page (`last` null) every run is
 * on this one.
 */
export function growFirstPage(fetched: RunListItem[], last: RunListItem | null): RunListItem[] {
  return last ? fetched.filter((r) => atOrBefore(r, last)) : fetched;
}

/** `query` (the list's URL parameters) with `limit` set: the poll asks for the page's rows and room for new ones */
export function withLimit(query: string, limit: number): string {
  const q = new URLSearchParams(query);
  q.set('limit', String(limit));
  return q.toString();
}
