// WAL checkpoints off the main thread. A checkpoint copies the WAL into the database file and
// fsyncs it; done by SQLite's auto-checkpoint it blocks whichever write crosses the threshold, which
// was most of the cost of recording a run. The main connection turns auto-checkpoint off and a
// worker thread runs PASSIVE checkpoints (they never block writers) every CHECKPOINT_MS. Once no
// write has come for WAL_IDLE_MS it runs one TRUNCATE checkpoint, so an idle database leaves no
// WAL file behind (closeDb truncates it too). Under a steady write load a PASSIVE checkpoint
// never finds a moment with the whole WAL copied, and SQLite starts the WAL over only then: the
// WAL grew without bound (490 MB after 8,000 recorded runs, each write extending the file). Once
// it holds WAL_RESTART_FRAMES frames, a RESTART checkpoint (a writer held back at most 20 ms)
// makes the next writer start it over from its beginning.
import { Worker } from 'node:worker_threads';

const CHECKPOINT_MS = 250;
/** no commit for this long: the WAL is checkpointed whole and truncated to zero bytes */
export const WAL_IDLE_MS = 2_000;
/** frames (pages of 4 KiB) in the WAL past which it is started over (about 16 MiB) */
export const WAL_RESTART_FRAMES = 4_000;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
// data_version changes whenever another connection commits: the time of the last write
let version = null, lastWrite = Date.now(), truncated = false;
const tick = () => {
  try {
    const v = db.pragma('data_version', { simple: true });
    if (v !== version) { version = v; lastWrite = Date.now(); truncated = false; }
    if (!truncated && Date.now() - lastWrite >= workerData.idleMs) {
      // TRUNCATE holds new writers back while it waits for readers: wait briefly, else next tick
      db.pragma('busy_timeout = 100');
      try { truncated = db.pragma('wal_checkpoint(TRUNCATE)')[0].busy === 0; } finally { db.pragma('busy_timeout = 5000'); }
    } else {
      const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
      if (r.log > workerData.restartFrames) {
        db.pragma('busy_timeout = 20');
        try { db.pragma('wal_checkpoint(RESTART)'); } finally { db.pragma('busy_timeout = 5000'); }
      }
    }
  } catch {}
};
const timer = setInterval(tick, workerData.everyMs);
parentPort.on('message', (m) => { if (m === 'stop') { clearInterval(timer); tick(); db.close(); parentPort.close(); } });
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/** Starts background checkpoints of the database at `path`; null when workers are unavailable. */
export function startCheckpointer(path: string, driverPath: string, onFail: () => void, opts: { restartFrames?: number } = {}): Checkpointer | null {
  let worker: Worker;
  try {
    worker = new Worker(WORKER, {
      eval: true,
      workerData: { path, driver: driverPath, everyMs: CHECKPOINT_MS, idleMs: WAL_IDLE_MS, restartFrames: opts.restartFrames ?? WAL_RESTART_FRAMES },
    });
  } catch {
    return null;
  }
  worker.unref();
  let exited = false;
  worker.once('exit', () => (exited = true));
  worker.on('error', (err) => {
    console.error('aqven: background checkpoints stopped, SQLite checkpoints inline again:', err.message);
    onFail();
  });
  return {
    stop: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        worker.once('exit', () => resolve());
        worker.ref(); // the caller awaits its exit: an unref'd worker would let the process end first
        worker.postMessage('stop');
      }),
  };
}
