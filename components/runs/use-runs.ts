'use client';
// Live data of the runs pages over /api: polled every second only while a run is queued or running
// (it may still change; every other status is final).
import { useQuery } from '@tanstack/react-query';
import type { RunDetailResponse, RunListResponse } from '@/lib/dashboard/api-types';
import { isLiveRun } from '@/lib/dashboard/run-status';

const POLL_MS = 1000;

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** `renderedAt` keys the cache by server render, so a fresh page never shows an older poll. */
export function useRunList(query: string, initial: RunListResponse, renderedAt: number) {
  return useQuery({
    queryKey: ['runs', query, renderedAt],
    queryFn: () => getJson<RunListResponse>(`/api/runs${query ? `?${query}` : ''}`),
    initialData: initial,
    initialDataUpdatedAt: renderedAt,
    staleTime: POLL_MS,
    refetchInterval: (q) => (q.state.data?.items.some((r) => isLiveRun(r.status)) ? POLL_MS : false),
  });
}

export function useRunDetail(id: string, initial: RunDetailResponse, renderedAt: number) {
  return useQuery({
    queryKey: ['run', id, renderedAt],
    queryFn: () => getJson<RunDetailResponse>(`/api/runs/${encodeURIComponent(id)}/detail`),
    initialData: initial,
    initialDataUpdatedAt: renderedAt,
    staleTime: POLL_MS,
    refetchInterval: (q) => (q.state.data && isLiveRun(q.state.data.status) ? POLL_MS : false),
  });
}
