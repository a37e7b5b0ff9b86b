// Ids of the rows a run writes many of — node runs and attempts (DESIGN: Storage, "Ids"): UUID
// version 7, the time first, so each new row's id sorts after the ones written before it. Every
// index keyed by such an id (the primary keys, attempts by node run, tries by attempt) then grows
// at its right edge: a commit rewrites the one page the ids of its rows share, not a page per row
// somewhere in the middle. Measured, random ids cost a commit of a handful of runs a page per row
// and index; the cost grows with the history (DESIGN: Storage). Run ids are version 7 too: their
// short id is taken from the random last group (lib/shared/short-id.ts).
import { v7 } from 'uuid';

/** A new id for a node run or an attempt: a UUID whose order is the order ids were made in this process. */
export function newRecordId(): string {
  return v7();
}
