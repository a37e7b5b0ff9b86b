'use client';
// "Replay the group with the current policy" on a failure group (DESIGN: The dashboard, "Replay
// with the current policy"), for the failures page: a cost cap for the whole batch, then the
// group's newest failed nodes replayed 4 at a time (server action replayGroupAction), their
// progress polled from GET /api/replays/:batchId until the batch is done, then how many now succeed.
// Its styles are app/styles/replay.css: the page that mounts it imports them.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useActionState, useState } from 'react';
import { replayGroupAction } from '@/lib/actions/replay-group';
import type { BatchResponse } from '@/lib/dashboard/replay-types';
import { BATCH_MAX_NODES } from '@/lib/contracts/replay';
import type { ReplayFormState } from '@/lib/forms/replay';
import { fmtCost, shortId } from '@/components/ui/format';
import { runHref } from '@/lib/dashboard/run-anchors';

const POLL_MS = 1000;

async function getBatch(id: string): Promise<BatchResponse> {
  const url = `/api/replays/${encodeURIComponent(id)}`;
  const res = await fetch(url, { cache: 'no-store' });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as BatchResponse;
}

/** each item's state as a status badge: its colour (a run status's) and its words */
const STATE_BADGE = {
  waiting: ['pending', 'waiting'],
  running: ['running', 'running'],
  succeeded: ['succeeded', 'succeeded'],
  failed: ['failed', 'still fails'],
  refused: ['skipped', 'cannot replay'],
  not_started: ['skipped', 'not started'],
} as const;

function BatchProgressView({ batchId }: { batchId: string }) {
  const { data: b, isError } = useQuery({
    queryKey: ['replay-batch', batchId],
    queryFn: () => getBatch(batchId),
    refetchInterval: (q) => (q.state.data?.done ? false : POLL_MS),
  });
  if (!b) return <p className="muted small">{isError ? 'Could not read the batch’s progress.' : 'Starting…'}</p>;
  const finished = b.counts.succeeded + b.counts.failed + b.counts.refused + b.counts.not_started;
  const pct = b.total ? Math.round((finished / b.total) * 100) : 100;
  return (
    <div className="replay-batch" data-testid="replay-batch" data-batch={b.id} data-done={b.done}>
      <div className="replay-progress" role="progressbar" aria-valuemin={0} aria-valuemax={b.total} aria-valuenow={finished} aria-label="Replays finished">
        <span style={{ width: `${pct}%` }} />
      </div>
      <p className="small" data-testid="replay-batch-summary">
        {b.done ? (
          <strong>
            {b.counts.succeeded} of {b.total} now succeed
          </strong>
        ) : (
          <>
            {finished} of {b.total} done · {b.counts.running} running
          </>
        )}
        {' · '}
        {b.counts.failed} still fail
        {b.counts.refused ? ` · ${b.counts.refused} could not be replayed` : ''}
        {b.counts.not_started ? ` · ${b.counts.not_started} not started` : ''} · spent <span className="mono">{fmtCost(b.spentUsd)}</span> of{' '}
        <span className="mono">{fmtCost(b.capUsd)}</span>
      </p>
      {b.stopped ? (
        <p className="hint small" data-testid="replay-batch-stopped">
          Stopped: {b.stopped}
        </p>
      ) : null}
      <details className="io">
        <summary>Replays ({b.total})</summary>
        <ul className="replay-batch-items">
          {b.items.map((it) => (
            <li key={`${it.runId}:${it.nodeId}`} data-state={it.state}>
              <span className={`status status-${STATE_BADGE[it.state][0]}`} data-testid="replay-item-state">
                {it.state === 'running' ? <span className="pulse" aria-hidden /> : null}
                {STATE_BADGE[it.state][1]}
              </span>{' '}
              <Link href={runHref(it.runId, { node: it.nodeId })} className="mono">
                {shortId(it.runId)}/{it.nodeId}
              </Link>
              {it.replayRunId ? (
                <>
                  {' → '}
                  <Link href={runHref(it.replayRunId)} className="mono">
                    replay {shortId(it.replayRunId)}
                  </Link>
                </>
              ) : null}{' '}
              <span className="mono muted">{fmtCost(it.costUsd)}</span>
              {/* the batch's own stop reason is said once, above */}
              {it.reason && it.state !== 'succeeded' && it.reason !== b.stopped ? <div className="muted small replay-reason">{it.reason}</div> : null}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

export function ReplayGroupButton({
  sig,
  since,
  nodes,
  defaultCap = 0.5,
}: {
  sig: string;
  since: number;
  /** failed nodes in the group, when known */ nodes?: number;
  defaultCap?: number;
}) {
  const [state, formAction, pending] = useActionState(replayGroupAction, { status: 'idle' } as ReplayFormState);
  const [open, setOpen] = useState(false);
  if (state.status === 'started') return <BatchProgressView batchId={state.batchId} />;
  const count = nodes === undefined ? 'its failed nodes' : `${Math.min(nodes, BATCH_MAX_NODES)} failed node${nodes === 1 ? '' : 's'}`;
  if (!open) {
    return (
      <button type="button" className="small secondary" onClick={() => setOpen(true)} data-testid="replay-group-open">
        Replay with the current policy…
      </button>
    );
  }
  const error = state.status === 'error' ? state : null;
  return (
    <form action={formAction} className="replay-group" data-testid="replay-group-form">
      <input type="hidden" name="sig" value={sig} />
      <input type="hidden" name="since" value={since} />
      <span className="small">
        Replays {count} of this group (the newest, at most {BATCH_MAX_NODES}), 4 at a time, under the current files.
      </span>
      <label className="replay-cap">
        <span>Cost cap for the batch (USD)</span>
        <input name="cap" inputMode="decimal" defaultValue={String(defaultCap)} aria-invalid={error?.field === 'cap'} data-testid="replay-group-cap" />
      </label>
      <button type="submit" className="small" disabled={pending} data-testid="replay-group-start">
        {pending ? 'Starting…' : 'Start'}
      </button>
      <button type="button" className="small secondary" onClick={() => setOpen(false)} disabled={pending}>
        Cancel
      </button>
      {error && !pending ? (
        <span className="field-error" data-testid="field-error" data-code={error.code} role="alert">
          <span className="code">{error.code}</span> {error.message}
        </span>
      ) : null}
    </form>
  );
}
