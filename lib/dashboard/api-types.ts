// The JSON shapes the dashboard's client components read from /api (type-only, so components
// depend on the API's contract, never on db/ itself).
import type { RunListItem, RunOrigin, RunTrace } from '@/db/queries';
import type { RunFacts } from '@/db/types';

export type { RunListItem, RunFacts, RunOrigin };

/** GET /api/runs */
export interface RunListResponse {
  items: RunListItem[];
  nextCursor: string | null;
}

/** GET /api/runs/:id/detail: every stored fact of a run (the run page's data), with who started it, its project version and its trace. */
export type RunDetailResponse = RunFacts & RunOrigin & Partial<RunTrace>;
