'use client';
// A run that was just started may be written to the database a moment after its id is handed out
// (the recorder batches writes): wait for it briefly before calling it missing.
import Link from 'next/link';
import { useEffect, useState } from 'react';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { RunView } from './run-view';

const GIVE_UP_MS = 5000;
const FIRST_RETRY_MS = 150;

export function RunPending({ id }: { id: string }) {
  const [found, setFound] = useState<{ facts: RunDetailResponse; at: number } | null>(null);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const started = Date.now();
    let delay = FIRST_RETRY_MS;
    const poll = async () => {
      try {
        const res = await fetch(`/api/runs/${encodeURIComponent(id)}/detail`, { cache: 'no-store' });
        if (stopped) return;
        if (res.ok) {
          setFound({ facts: (await res.json()) as RunDetailResponse, at: Date.now() });
          return;
        }
      } catch {
        // the server may be restarting; try again until the deadline
      }
      if (Date.now() - started > GIVE_UP_MS) setMissing(true);
      else {
        timer = setTimeout(poll, delay);
        delay = Math.min(delay * 2, 1500);
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id]);

  if (found) return <RunView initial={found.facts} renderedAt={found.at} />;
  if (missing) {
    return (
      <>
        <h1>Run not found</h1>
        <p className="muted">
          No run with id <span className="mono">{id}</span> in this project&apos;s database. <Link href="/runs">Back to the runs</Link>
        </p>
      </>
    );
  }
  return (
    <p className="muted" role="status">
      Waiting for run <span className="mono">{id}</span> to be recorded…
    </p>
  );
}
