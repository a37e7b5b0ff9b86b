// A fresh copy of the showcase project, its own database and a simulator on loopback playing
// the scripts a test gives: the integration tests' whole world, no mocks.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeDb, openDb } from '@/db/client';
import type { Db } from '@/db/types';
import { routeToSimulator } from '@/lib/flow/simulate';
import { runFlow, type RunFlowOptions } from '@/lib/flow/run-flow';
import { loadProject, type Project } from '@/lib/project';
import { startSimulator, type ScriptMap, type SimServer } from '@/lib/sim';
import { openTestDb, type Dialect } from './dialects';
import { copyShowcaseTo } from './showcase-copy.mjs';

export const FLASH_LITE = 'google/gemini-2.5-flash-lite';
export const GPT_OSS = 'openai/gpt-oss-20b';

export interface World<D extends Db = ReturnType<typeof openDb>> {
  dir: string;
  project: Project;
  sim: SimServer;
  db: D;
  run(flow: string, input: unknown, extra?: Partial<RunFlowOptions>): ReturnType<typeof runFlow>;
  close(): Promise<void>;
}

/**
 * A copy of the showcase without its run history. Its simulator answers at once (zero latency),
 * chaos and everything else as in the showcase: a test about time asks for `{ latency: 'showcase' }`
 * or scripts its own latency.
 */
export function copyShowcase(o: { latency?: 'zero' | 'showcase' } = {}): string {
  return copyShowcaseTo(mkdtempSync(join(tmpdir(), 'aqven-it-')), o);
}

/** The showcase in `dir`, its simulator playing `scripts`, and the database `open` gives (closed with the world). */
async function assemble<D extends Db>(scripts: ScriptMap, dir: string, open: (project: Project) => Promise<{ db: D; close(): Promise<void> }>): Promise<World<D>> {
  const { project, diagnostics } = await loadProject(dir, { env: {} });
  if (!project) throw new Error(`showcase copy invalid: ${JSON.stringify(diagnostics, null, 1)}`);
  const store = await open(project);
  const sim = await startSimulator({ scripts });
  const { providers, env } = routeToSimulator(project, sim);
  const db = store.db;
  return {
    dir,
    project,
    sim,
    db,
    run: (flow, input, extra) => runFlow({ project, flow, input, providers, env, db, ...extra }),
    close: async () => {
      await sim.close();
      await store.close();
    },
  };
}

export function world(scripts: ScriptMap, dir = copyShowcase()): Promise<World> {
  return assemble(scripts, dir, async (project) => ({ db: openDb(project.databasePath), close: () => closeDb(project.databasePath) }));
}

/**
 * The same world on either dialect (test/helpers/dialects.ts): the showcase, its simulator, and a
 * fresh database — the project's SQLite file, or a new database in the throwaway PostgreSQL cluster.
 */
export function worldOn(dialect: Dialect, scripts: ScriptMap, dir = copyShowcase()): Promise<World<Db>> {
  if (dialect === 'sqlite') return world(scripts, dir);
  return assemble<Db>(scripts, dir, () => openTestDb('pg'));
}
