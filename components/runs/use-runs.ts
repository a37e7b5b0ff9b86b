'use client';
// Live data of the runs pages over /api: a run's page follows the run's events while it is queued or
// running (it may still change; every other status is final). The run list's first page also
// shows new runs as they start; a later page (a cursor's) stays as it is but for its live rows. No
// poll while the tab is hidden (React Query pauses intervals then, and refetches on return).
import { useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { RunDetailResponse, RunListResponse } from '@/lib/dashboard/api-types';
import { growFirstPage, withLimit } from '@/lib/dashboard/run-list-live';
import { isLiveRun } from '@/lib/dashboard/run-status';
import { followRunEvents } from '@/lib/dashboard/run-follow';
import type { SeenPause } from '@/lib/flow/run-events';

const POLL_MS = 1000;
/** the first page looks for new runs this often: a run started elsewhere shows within about 2 s */
export const NEW_RUNS_POLL_MS = 1500;
/** new runs one poll may add to the first page; more, and the newest are shown */
const NEW_RUNS_MAX = 50;
/** the API's longest page */
const PAGE_MAX = 500;

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** `renderedAt` keys the cache by server render, so a fresh page never shows an older poll. */
export function useRunList(query: string, initial: RunListResponse, renderedAt: number, firstPage = false) {
  const shown = useRef(initial.items.length);
  // the server's page ends here when there is a next page; without one, every run is on this page
  const last = initial.nextCursor ? (initial.items.at(-1) ?? null) : null;
  return useQuery({
    queryKey: ['runs', query, renderedAt],
    queryFn: async (): Promise<RunListResponse> => {
      if (!firstPage) return getJson<RunListResponse>(`/api/runs${query ? `?${query}` : ''}`);
      const limit = Math.min(PAGE_MAX, Math.max(shown.current, initial.items.length) + NEW_RUNS_MAX);
      const page = await getJson<RunListResponse>(`/api/runs?${withLimit(query, limit)}`);
      const items = growFirstPage(page.items, last);
      shown.current = items.length;
      return { items, nextCursor: initial.nextCursor };
    },
    initialData: initial,
    initialDataUpdatedAt: renderedAt,
    staleTime: POLL_MS,
    refetchInterval: (q) => (q.state.data?.items.some((r) => isLiveRun(r.status)) ? POLL_MS : firstPage ? NEW_RUNS_POLL_MS : false),
    refetchIntervalInBackground: false,
  });
}

/** how often the page's clock moves on while a run is live and no event came (the timeline's axis grows with it) */
const TICK_MS = 1000;

/**
 * A run's page data: the facts it was rendered with, followed while the run is queued or running
 * through its events (lib/dashboard/run-follow.ts: GET /api/runs/:id/events, the API's and `aqven
 * show --follow`'s source), with the rate-limit pauses they tell of. `dataUpdatedAt` moves on every
 * event and every second while the run is live.
 */
export function useRunDetail(id: string, initial: RunDetailResponse, renderedAt: number) {
  const [state, setState] = useState<{ run: RunDetailResponse; pauses: SeenPause[] }>({ run: initial, pauses: [] });
  const [isError, setError] = useState(false);
  const [dataUpdatedAt, setUpdatedAt] = useState(renderedAt);
  const live = isLiveRun(state.run.status);
  useEffect(() => {
    if (!isLiveRun(initial.status)) return;
    return followRunEvents(initial, (url) => new EventSource(url), {
      onChange: (s) => {
        setState(s);
        setUpdatedAt(Date.now());
      },
      onError: setError,
    });
    // one stream per run and render: `initial` is that render's
  }, [id, renderedAt]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setUpdatedAt(Date.now()), TICK_MS);
    return () => clearInterval(t);
  }, [live]);
  return { data: state.run, pauses: state.pauses, dataUpdatedAt, isError };
}
