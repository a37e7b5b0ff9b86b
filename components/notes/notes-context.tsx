'use client';
// The notes of the run page: read once with the page, then from GET /api/runs/:id/notes every 15 s
// while the page is visible (a teammate's note shows up) and at once after this page writes one.
// The newest 100 first; "Show older notes" asks for 100 more each time (up to the 500 a run keeps),
// and the poll then reads them all again, so an older note edited or deleted is seen too.
// Every notes component reads them here; outside a provider they render nothing, so the run view
// works on any page.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import type { NoteView, NotesResponse } from '@/lib/dashboard/note-types';
import { LinkTarget } from './link-target';

const POLL_MS = 15_000;
/** notes per page, as the route and the server render read them (NOTES_PAGE); at most NOTES_MAX in all (NOTES_PER_RUN_MAX) */
const PAGE = 100;
const NOTES_MAX = 500;

interface NotesContext {
  runId: string;
  /** the author this caller's notes are written as: their own notes are the ones they may change */
  me: string;
  notes: NoteView[];
  /** older notes than these exist */
  older: boolean;
  /** asks for the next page of older notes */
  showOlder(): void;
  loadingOlder: boolean;
  refreshFailed: boolean;
  refresh(): Promise<void>;
}

const Ctx = createContext<NotesContext | null>(null);

export function useNotes(): NotesContext | null {
  return useContext(Ctx);
}

async function getNotes(runId: string, limit: number): Promise<NotesResponse> {
  const url = `/api/runs/${encodeURIComponent(runId)}/notes?limit=${limit}`;
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as NotesResponse;
}

/** `renderedAt` keys the cache by server render, so a fresh page never shows an older poll. */
export function NotesProvider({ runId, me, initial, renderedAt, children }: { runId: string; me: string; initial: NoteView[]; renderedAt: number; children: ReactNode }) {
  const qc = useQueryClient();
  const [limit, setLimit] = useState(PAGE);
  const { data, isError, isPlaceholderData } = useQuery({
    queryKey: ['notes', runId, renderedAt, limit],
    queryFn: () => getNotes(runId, limit),
    // the server render read the newest page; whether older ones exist, the first poll says
    initialData: limit === PAGE ? { notes: initial, older: initial.length >= PAGE ? 'unknown' : null } : undefined,
    initialDataUpdatedAt: renderedAt,
    // while a longer page loads, the notes shown so far stay
    placeholderData: keepPreviousData,
    refetchInterval: POLL_MS,
  });
  const refresh = useCallback(() => qc.invalidateQueries({ queryKey: ['notes', runId] }), [qc, runId]);
  const showOlder = useCallback(() => setLimit((l) => Math.min(NOTES_MAX, l + PAGE)), []);
  const notes = data?.notes ?? initial;
  const older = Boolean(data?.older) && limit < NOTES_MAX;
  const value = useMemo(
    () => ({ runId, me, notes, older, showOlder, loadingOlder: isPlaceholderData, refreshFailed: isError, refresh }),
    [runId, me, notes, older, showOlder, isPlaceholderData, isError, refresh],
  );
  return (
    <Ctx.Provider value={value}>
      {children}
      <LinkTarget />
    </Ctx.Provider>
  );
}
