// What the parts of a run store share (db/run-store.ts composes them): the connection, the
// statements, the leases and fences, the feeds, the adopted runs' reads and the write queue.
import type { LeaseKeeper } from '../run-lease';
import type { Db } from '../types';
import type { AdoptReads } from './adopt';
import type { Feeds } from './feeds';
import type { Fencing } from './fencing';
import type { Statements } from './statements';
import type { WriteQueue } from './write-queue';

export interface StoreContext {
  db: Db;
  s: Statements;
  keeper: LeaseKeeper;
  fencing: Fencing;
  feeds: Feeds;
  adopt: AdoptReads;
  queue: WriteQueue;
  /** runs whose turn count is queued to be written (setRunTurns): the latest count */
  turnsDue: Map<string, number>;
  /** a run leaves this store (finished elsewhere, handed back, lost): what the feeds kept of it goes */
  forget(runId: string): void;
}

/** a JSON column's value as its column would encode it (undefined: NULL) */
export const jsonText = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
