// Vitest's global setup for temporary files: every test run writes its projects, databases and
// copies under one folder of its own (TMPDIR, which os.tmpdir() reads and every worker and child
// process inherits), removed when the run ends — a run leaves nothing behind in the system's
// temporary folder, whatever a test forgot to clean. AQVEN_TEST_KEEP_TMP=1 keeps it (and says
// where) to look at what a failing test wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | null = null;

export function setup(): void {
  root = mkdtempSync(join(tmpdir(), 'aqven-test-'));
  process.env.TMPDIR = root;
}

export function teardown(): void {
  if (!root) return;
  if (process.env.AQVEN_TEST_KEEP_TMP === '1') console.log(`temporary files of this run kept in ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
