// One replay in a list (the run page's "Replays of this run", the replay page's earlier replays).
import Link from 'next/link';
import type { RunStatus } from '@/db/types';
import { fmtCost, shortId } from '@/components/ui/format';
import { LocalTime } from '@/components/ui/local-time';
import { StatusBadge } from '@/components/ui/status-badge';
import { runHref } from '@/lib/dashboard/run-anchors';

export interface ReplayLineFacts {
  id: string;
  status: RunStatus;
  costUsd: number;
  startedAt: number;
  startedBy: string | null;
}

export function ReplayLine({ r, node }: { r: ReplayLineFacts; node?: string | null }) {
  return (
    <li>
      <Link href={runHref(r.id)} className="mono">
        {shortId(r.id)}
      </Link>{' '}
      {node ? (
        <>
          node <span className="mono">{node}</span>{' '}
        </>
      ) : null}
      <StatusBadge status={r.status} /> <span className="mono muted">{fmtCost(r.costUsd)}</span>{' '}
      <span className="muted small">
        <LocalTime ms={r.startedAt} withDate />
        {r.startedBy ? ` · ${r.startedBy}` : ''}
      </span>
    </li>
  );
}
