// Vitest's global setup for temporary files: every test run writes its projects, databases and
// copies under one folder of its own (TMPDIR, which os.tmpdir() reads and every worker and child
// process inherits), removed when the run ends — a run leaves nothing behind in the system's
// temporary folder, whatever a test forgot to clean. Set up first and torn down first (it is the
// root config's; the projects' own setups run after it). AQVEN_TEST_KEEP_TMP=1 keeps it (and says
// where) to look at what a failing test wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | null = null;

export function setup(): void {
  // the system's folder stays known: the PostgreSQL cluster lives there (pg-cluster.ts), as it outlives this folder
  process.env.AQVEN_SYSTEM_TMPDIR ??= tmpdir();
  root = mkdtempSync(join(process.env.AQVEN_SYSTEM_TMPDIR, 'aqven-test-'));
  process.env.TMPDIR = root;
}

export function teardown(): void {
  if (!root) return;
  if (process.env.AQVEN_TEST_KEEP_TMP === '1') console.log(`temporary files of this run kept in ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
