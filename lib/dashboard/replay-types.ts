// The JSON shapes the replay components read (type-only: client components depend on the route's
// contract, never on lib/server or db/ themselves).
import type { BatchItemProgress, BatchItemState, BatchProgress } from '@/lib/flow/replay-batch';
import type { DiffLine } from '@/lib/flow/replay';
import type { ReplaySummary } from '@/db/replay-queries';

export type { BatchItemProgress, BatchItemState, DiffLine, ReplaySummary };

/** GET /api/replays/:batchId */
export interface BatchResponse extends BatchProgress {
  id: string;
  label: string;
  startedBy: string | null;
  startedAt: number;
}
