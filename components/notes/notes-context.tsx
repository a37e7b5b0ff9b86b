'use client';
// The notes of the run page: read once with the page, then from GET /api/runs/:id/notes every 15 s
// while the page is visible (a teammate's note shows up) and at once after this page writes one.
// Every notes component reads them here; outside a provider they render nothing, so the run view
// works on any page.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, type ReactNode } from 'react';
import type { NoteView, NotesResponse } from '@/lib/dashboard/note-types';
import { LinkTarget } from './link-target';

const POLL_MS = 15_000;

interface NotesContext {
  runId: string;
  /** the author this caller's notes are written as: their own notes are the ones they may change */
  me: string;
  notes: NoteView[];
  refreshFailed: boolean;
  refresh(): Promise<void>;
}

const Ctx = createContext<NotesContext | null>(null);

export function useNotes(): NotesContext | null {
  return useContext(Ctx);
}

async function getNotes(runId: string): Promise<NotesResponse> {
  const url = `/api/runs/${encodeURIComponent(runId)}/notes`;
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as NotesResponse;
}

/** `renderedAt` keys the cache by server render, so a fresh page never shows an older poll. */
export function NotesProvider({ runId, me, initial, renderedAt, children }: { runId: string; me: string; initial: NoteView[]; renderedAt: number; children: ReactNode }) {
  const qc = useQueryClient();
  const { data, isError } = useQuery({
    queryKey: ['notes', runId, renderedAt],
    queryFn: () => getNotes(runId),
    initialData: { notes: initial },
    initialDataUpdatedAt: renderedAt,
    refetchInterval: POLL_MS,
  });
  const refresh = useCallback(() => qc.invalidateQueries({ queryKey: ['notes', runId] }), [qc, runId]);
  const value = useMemo(() => ({ runId, me, notes: data.notes, refreshFailed: isError, refresh }), [runId, me, data.notes, isError, refresh]);
  return (
    <Ctx.Provider value={value}>
      {children}
      <LinkTarget />
    </Ctx.Provider>
  );
}
