// Two runs with random (v4) ids, as recorded before ids were time-ordered, sharing their first 8
// characters ("beefcafe"): a prefix that names both. Written straight into a project's database
// (closed again), for tests of how a command answers an ambiguous run id.
import { closeDb, openDatabase } from '@/db/client';

export const TWIN_RUN_IDS = ['beefcafe-0000-4000-8000-1111aaaa0001', 'beefcafe-0000-4000-8000-2222bbbb0002'] as const;

/** Inserts the twins into the SQLite database at `file` (a triage run that succeeded, a long-answer run that failed); returns their ids. */
export async function insertTwinRuns(file: string): Promise<typeof TWIN_RUN_IDS> {
  const db = await openDatabase(file);
  await db.q.insert(db.t.runs).values([
    { id: TWIN_RUN_IDS[0], project: 'showcase', flow: 'triage', status: 'succeeded', input: null, startedAt: Date.UTC(2026, 0, 1, 9) },
    { id: TWIN_RUN_IDS[1], project: 'showcase', flow: 'long-answer', status: 'failed', input: null, startedAt: Date.UTC(2026, 0, 1, 10) },
  ]);
  await closeDb(file);
  return TWIN_RUN_IDS;
}
