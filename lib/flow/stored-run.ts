// A stored run as its run record (DESIGN: The run record): db/ reads the facts, lib/flow builds the
// record, so `aqven show`, `GET /api/runs/:id` and a live run print the same shape.
import { getRunFacts } from '@/db/queries';
import type { Db } from '@/db/types';
import { buildRunRecord, type RunRecord } from './run-record';

/** The run record of run `id`, or null when there is no such run. */
export async function getRunRecord(db: Db, id: string): Promise<RunRecord | null> {
  const facts = await getRunFacts(db, id);
  return facts ? buildRunRecord(facts) : null;
}
