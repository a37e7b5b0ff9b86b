// What the recording probes (bench/record-probe.ts, bench/wal-frames.ts) share: the one-node project
// in a temporary folder, recorded into its own SQLite file over the in-process simulator, and the
// schema variants they can measure against the product's.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { openDb } from '@/db/client';
import { routeToSimulator } from '@/lib/flow/simulate';
import { loadProject } from '@/lib/project';
import { startSimulator } from '@/lib/sim';
import { oneNodeProject } from './one-node-project';

/** The probe project (bench/one-node-project.ts) in a new temporary folder, its database open, the simulator started. */
export async function probeProject(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `aqven-${name}-`));
  for (const [f, text] of Object.entries(oneNodeProject(name))) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const { project } = await loadProject(dir, { env: {} });
  if (!project) throw new Error(`${name}: the probe project is invalid`);
  const sim = await startSimulator();
  const { providers, env } = routeToSimulator(project, sim);
  const db = openDb(project.databasePath);
  return { dir, project, sim, providers, env, db };
}

/**
 * search_docs made again (while it is empty) with its id a plain rowid alias, as it would be without
 * AUTOINCREMENT: no sqlite_sequence row rewritten by every commit that adds a doc.
 */
export function withoutAutoincrement(c: Database.Database): void {
  const objects = c.prepare("SELECT type, sql FROM sqlite_master WHERE tbl_name = 'search_docs' AND sql IS NOT NULL ORDER BY type = 'table' DESC").all() as {
    type: string;
    sql: string;
  }[];
  c.exec('DROP TABLE search_docs');
  for (const o of objects) c.exec(o.type === 'table' ? o.sql.replace(/\s+AUTOINCREMENT/i, '') : o.sql);
}

/** Drops the named indexes (a measurement of what they cost, never the product's schema); an unknown name throws. */
export function dropIndexes(c: Database.Database, names: string[]): void {
  for (const n of names) {
    if (!c.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(n)) throw new Error(`--drop-indexes: no index named "${n}"`);
    c.exec(`DROP INDEX "${n}"`);
  }
}
