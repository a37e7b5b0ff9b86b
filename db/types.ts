// The types db/ hands out: the connection, and the stored facts of a run (DESIGN: Storage). They
// live apart from client.ts and queries.ts so every db module and lib/flow can share them without
// importing each other; the run record built from these facts lives in lib/flow/run-record.ts.
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { AttemptRecord, NodeErrorCode, NodePolicy } from '@/lib/engine/types';
import type * as schema from './schema';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'interrupted';
export type NodeStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface RunError {
  code: string;
  node: string | null;
  message: string;
  hint: string | null;
}

/** Everything stored about one run, in the order it happened (a live run keeps the same shape). */
export interface RunFacts {
  id: string;
  flow: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: RunError | null;
  turns: number;
  startedAt: number;
  finishedAt: number | null;
  nodes: NodeFacts[];
}

export interface NodeFacts {
  id: string;
  agent: string;
  turn: number;
  status: NodeStatus;
  output: unknown;
  error: { code: NodeErrorCode | string; message: string; hint: string } | null;
  policy: NodePolicy | null;
  attempts: AttemptFacts[];
  startedAt: number | null;
  finishedAt: number | null;
}

/** An attempt as stored: one cut off by a crash has no outcome, and may have no finish time. */
export type AttemptFacts = Omit<AttemptRecord, 'outcome' | 'finishedAt'> & {
  outcome: AttemptRecord['outcome'] | null;
  finishedAt: number | null;
};
