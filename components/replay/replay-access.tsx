'use client';
// Whether the run page's caller may replay a node (an editor), for the "Replay with the current
// policy" link on each failed node: the page knows the role, the node rows read it here. Outside
// a provider nobody may, so the run view works on any page.
import { createContext, useContext, type ReactNode } from 'react';

const Ctx = createContext<{ runId: string } | null>(null);

export function ReplayAccess({ runId, canReplay, children }: { runId: string; canReplay: boolean; children: ReactNode }) {
  return <Ctx.Provider value={canReplay ? { runId } : null}>{children}</Ctx.Provider>;
}

/** The run whose nodes this caller may replay; null when they may not. */
export function useReplayAccess(): { runId: string } | null {
  return useContext(Ctx);
}
