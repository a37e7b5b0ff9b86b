'use client';
// "Copy link" of a node or an attempt: copies the URL that opens this run page on it (scrolled
// there, its node opened, highlighted: link-target.tsx). A plain link to the anchor underneath,
// so "copy link address" and a middle click work too. The clipboard API exists only on secure
// origins (https, localhost): on plain http the older copy command is tried, and failing both the
// URL is left in the address bar to copy from there.
import { useEffect, useRef, useState, type MouseEvent } from 'react';
import { attemptAnchor, nodeAnchor } from '@/lib/dashboard/run-anchors';

type Copied = 'idle' | 'copied' | 'address-bar';

function copyByCommand(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // refused (no permission, page not focused): the older way below
  }
  return copyByCommand(text);
}

/** The copy-link button of node `nodeId`, or of its attempt `seq`. */
export function CopyLink({ nodeId, seq = null }: { nodeId: string; seq?: number | null }) {
  const anchor = seq === null ? nodeAnchor(nodeId) : attemptAnchor(nodeId, seq);
  const what = seq === null ? `node ${nodeId}` : `attempt #${seq} of node ${nodeId}`;
  const [state, setState] = useState<Copied>('idle');
  const reset = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(reset.current), []);

  const onClick = async (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return; // a new tab or window: the browser's
    e.preventDefault();
    const url = new URL(window.location.href);
    url.hash = anchor;
    // the address bar shows the link too, without scrolling or highlighting (no hashchange)
    window.history.replaceState(window.history.state, '', url);
    const ok = await copyText(url.href);
    setState(ok ? 'copied' : 'address-bar');
    clearTimeout(reset.current);
    reset.current = setTimeout(() => setState('idle'), 2000);
  };

  const label = `Copy link to ${what}`;
  return (
    <span className="copy-link-wrap">
      <a href={`#${anchor}`} className="copy-link" data-testid="copy-link" data-anchor={anchor} aria-label={label} title={label} onClick={onClick}>
        <svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true">
          <path
            d="M6.5 9.5a3 3 0 0 0 4.2 0l2.3-2.3a3 3 0 0 0-4.2-4.2l-.9.9M9.5 6.5a3 3 0 0 0-4.2 0L3 8.8A3 3 0 0 0 7.2 13l.9-.9"
            fill="none"
            stroke="currentColor"
            strokeWidth="1.6"
            strokeLinecap="round"
          />
        </svg>
      </a>
      <span className="copy-link-said" aria-live="polite" data-testid="copy-link-said">
        {state === 'copied' ? 'Link copied' : state === 'address-bar' ? 'Copy it from the address bar' : ''}
      </span>
    </span>
  );
}
