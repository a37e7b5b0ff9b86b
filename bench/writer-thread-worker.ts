// The worker thread of bench/writer-thread-probe.ts: it owns a write connection to the database and
// commits the batches the main thread posts — each a list of (statement number, run id, values),
// the run store's statements (db/run-store/statements.ts) bound by name here, in one IMMEDIATE
// transaction — and answers each batch once it is committed (or failed), with the runs whose facts
// it refused. A run's fence is checked as the product's SQLite store checks it (fencing.ts):
// confirmed once, again only after another connection committed (PRAGMA data_version).
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import * as schema from '@/db/schema';
import { storeStatements } from '@/db/run-store/statements';
import { indexPendingSearchDocs } from '@/db/search-index';
import { writeStatement } from '@/db/typed-sql';
import type { SqliteDb } from '@/db/types';

export type ToWriter = { type: 'commit'; id: number; batch: unknown[] } | { type: 'index' } | { type: 'cpu'; id: number } | { type: 'close' };
export type FromWriter = { type: 'done'; id: number; refused: string[]; error?: string } | { type: 'cpu'; id: number; ns: number };

const { path } = workerData as { path: string };
const c = new Database(path);
c.pragma('busy_timeout = 5000');
c.pragma('synchronous = NORMAL');
c.pragma('foreign_keys = ON');
c.pragma('secure_delete = ON');
c.pragma('wal_autocheckpoint = 0'); // the main connection's checkpointer thread does it
const q = drizzle(c, { schema });
const db = { dialect: 'sqlite', name: path, q, t: schema, $client: c } as unknown as SqliteDb;
const stmts = Object.values(storeStatements(q, schema, (query, binding) => writeStatement(c, query, binding))) as { run(v: unknown): void }[];
/** insertRun's number: its values carry the run's lease */
const INSERT_RUN = Object.keys(storeStatements(q, schema, () => ({ run: () => undefined }))).indexOf('insertRun');
const fenceOf = c.prepare('SELECT 1 FROM runs WHERE id = ? AND owner = ? AND fence = ?').pluck();
const version = c.prepare('PRAGMA data_version').pluck();
const leases = new Map<string, { owner: string; fence: number }>();
const confirmed = new Set<string>();
let seen: unknown = null;

function drain(batch: unknown[]): string[] {
  const v = version.get();
  if (v !== seen) confirmed.clear();
  seen = v;
  const refused = new Set<string>();
  for (let i = 0; i < batch.length; i += 3) {
    const no = batch[i] as number;
    const runId = batch[i + 1] as string | null;
    const values = batch[i + 2] as { id: string; owner: string; fence: number };
    if (no === INSERT_RUN) {
      leases.set(values.id, { owner: values.owner, fence: values.fence });
      confirmed.add(values.id);
    } else if (runId !== null && !confirmed.has(runId)) {
      const l = leases.get(runId);
      if (refused.has(runId) || (l && fenceOf.get(runId, l.owner, l.fence) === undefined)) {
        refused.add(runId);
        continue;
      }
      confirmed.add(runId);
    }
    stmts[no]!.run(values);
  }
  return [...refused];
}
const tx = c.transaction(drain);

const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);

parentPort!.on('message', (m: ToWriter) => {
  if (m.type === 'commit') {
    try {
      const refused = tx.immediate(m.batch);
      parentPort!.postMessage({ type: 'done', id: m.id, refused } satisfies FromWriter);
    } catch (err) {
      parentPort!.postMessage({ type: 'done', id: m.id, refused: [], error: err instanceof Error ? err.message : String(err) } satisfies FromWriter);
    }
  } else if (m.type === 'index') indexPendingSearchDocs(db);
  else if (m.type === 'cpu') parentPort!.postMessage({ type: 'cpu', id: m.id, ns: threadNs() } satisfies FromWriter);
  else {
    c.close();
    parentPort!.close();
  }
});
