'use client';
// Whether React has taken this part of the page over. Before that a form is the server's HTML: it
// still submits (as a plain POST), but React's hydration may set a field's value under a caret.
import { useSyncExternalStore } from 'react';

const noChanges = () => () => {};

/** false while the server's HTML is shown (and while hydrating), true from the first client render on. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noChanges,
    () => true,
    () => false,
  );
}
