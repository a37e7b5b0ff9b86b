'use client';
// Opening the run page on a link to a node or an attempt (lib/dashboard/run-anchors.ts): the node
// opens (its body may be collapsed, and an attempt exists only in an open body), the element is
// scrolled to once the client has rendered it, and highlighted for a moment. On load and whenever
// the hash changes (an attempt bar clicked, a link pasted into this tab).
import { useEffect } from 'react';
import { readRunAnchor } from '@/lib/dashboard/run-anchors';

const WAIT_MS = 5000;
const HIGHLIGHT_MS = 2500;

function onHash(listener: () => void): () => void {
  listener();
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
}

/** Opens node `nodeId` when the URL's hash points at it or at one of its attempts (call `open(true)`). */
export function useOpenOnLink(nodeId: string, open: (v: boolean) => void): void {
  useEffect(
    () =>
      onHash(() => {
        if (readRunAnchor(window.location.hash)?.nodeId === nodeId) open(true);
      }),
    [nodeId, open],
  );
}

/** Scrolls to the element the hash names once it exists, and highlights it (mounted once per page). */
export function LinkTarget() {
  useEffect(() => {
    let frame = 0;
    let unmark: ReturnType<typeof setTimeout> | undefined;
    const go = () => {
      cancelAnimationFrame(frame);
      const target = readRunAnchor(window.location.hash);
      if (!target) return;
      const until = performance.now() + WAIT_MS;
      const seek = () => {
        const el = document.getElementById(target.anchor);
        if (!el) {
          if (performance.now() < until) frame = requestAnimationFrame(seek);
          return;
        }
        el.scrollIntoView({ block: 'start' });
        // a data attribute, not a class: React re-renders a live run's classes and would drop it
        el.removeAttribute('data-link-target');
        void el.offsetWidth; // restart the highlight when the same link is opened again
        el.setAttribute('data-link-target', '');
        clearTimeout(unmark);
        unmark = setTimeout(() => el.removeAttribute('data-link-target'), HIGHLIGHT_MS);
      };
      seek();
    };
    const stop = onHash(go);
    return () => {
      stop();
      cancelAnimationFrame(frame);
      clearTimeout(unmark);
    };
  }, []);
  return null;
}
