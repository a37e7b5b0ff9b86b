'use client';
// Marks the page's <html data-hydrated> once React has taken it over. Until then its forms are the
// server's HTML: they submit as plain POSTs, but hydration may set a field's value under the caret
// or miss a change made before it. A browser test (or any script) waits for the mark before typing.
import { useEffect } from 'react';

export function HydrationMark(): null {
  useEffect(() => {
    document.documentElement.dataset.hydrated = '';
  }, []);
  return null;
}
