// One place that turns a project into what a run needs: the checked project, its database, and
// its providers (real, or routed to the simulator). The CLI, the dashboard's server, the workers
// and the tests all start runs through here. SQLite mode: the project is the folder on disk.
// PostgreSQL mode (DESIGN: Storage, "The project in the database"): the project is the newest
// snapshot in the database, written to a private folder named by its hash and loaded from there;
// a long-lived process switches to a newer snapshot through currentSession / refreshSession.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTarget, openDatabase, type Db } from '@/db/client';
import { isPostgresUrl } from '@/db/pg';
import { countRuns } from '@/db/queries';
import { cliAuthor, getSnapshot, latestSnapshot, latestSnapshotId, pushSnapshot, type Snapshot } from '@/db/snapshot-queries';
import type { ResolvedProvider } from '@/lib/engine/types';
import { loadProject, materializeProject, PROJECT_FILE, readProjectFiles, type Diagnostic, type Project } from '@/lib/project';
import { routeToSimulator, simulateProject, type SimulatedProviders } from './simulate';

type Env = Record<string, string | undefined>;

export class ProjectInvalidError extends Error {
  constructor(
    readonly diagnostics: Diagnostic[],
    /** the project that fails, when it is not the folder given: "snapshot 7" */
    where?: string,
  ) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super(
      where
        ? `${where} fails aqven check with ${errors.length} error(s); fix the files and run \`aqven project push DIR\``
        : `the project fails aqven check with ${errors.length} error(s); run \`aqven check\` to see them`,
    );
    this.name = 'ProjectInvalidError';
  }
}

/** PostgreSQL mode with nothing pushed yet, and no project folder to push. */
export class NoSnapshotError extends Error {
  constructor(dbName: string) {
    super(`the database ${dbName} holds no project yet: run \`aqven project push DIR\` first`);
    this.name = 'NoSnapshotError';
  }
}

export interface Session {
  project: Project;
  db: Db;
  /** the database as openDatabase and closeDb take it: the project's SQLite file, or AQVEN_DATABASE_URL */
  target: string;
  /** the project snapshot this session runs (PostgreSQL mode); null when the project is a folder */
  snapshotId: number | null;
  providers: Record<string, ResolvedProvider>;
  env: Record<string, string | undefined>;
  simulated: SimulatedProviders | null;
  /** `aqven check` warnings (e.g. W_API_KEY); empty when simulated, where keys are not needed */
  warnings: Diagnostic[];
  close(): Promise<void>;
}

export interface SessionOptions {
  simulate?: boolean;
  /** the environment: AQVEN_DATABASE_URL, `${VAR}` expansion, API keys (default process.env) */
  env?: Env;
  /** who pushes the folder when the database has no snapshot yet (default `cli:<login>`) */
  author?: string;
  /** where snapshots are materialized (default snapshotCacheDir(): a folder of this user in the temp folder) */
  cacheDir?: string;
}

/** What each session was opened with, for the sessions currentSession derives from it. */
const openedWith = new WeakMap<Session, { env: Env; cacheDir?: string }>();

/**
 * The session of a project. SQLite mode: the folder `dir`, its database the project's SQLite
 * file. PostgreSQL mode (AQVEN_DATABASE_URL=postgres://…): the newest snapshot of that database;
 * when it has none yet, the folder `dir` (which must pass check) is pushed first, as
 * "first push"; with no folder (or none with an aqven.yaml) either, NoSnapshotError.
 */
export async function openSession(dir: string | null, opts: SessionOptions = {}): Promise<Session> {
  const env = opts.env ?? process.env;
  // the URL is known before any project is loaded: in PostgreSQL mode the project comes from it
  const url = databaseTarget('', env);
  if (isPostgresUrl(url)) return openSnapshotSession(url, dir, opts, env);
  if (dir === null) throw new Error('no project folder given (and AQVEN_DATABASE_URL is not a postgres:// URL)');
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) throw new ProjectInvalidError(diagnostics);
  const target = databaseTarget(project.databasePath, env);
  const db = await openDatabase(target);
  return assemble({ project, diagnostics, db, target, snapshotId: null, env, simulate: !!opts.simulate, cacheDir: opts.cacheDir });
}

async function openSnapshotSession(url: string, dir: string | null, opts: SessionOptions, env: Env): Promise<Session> {
  const db = await openDatabase(url);
  let snapshot = await latestSnapshot(db);
  if (!snapshot) {
    // no folder to push (a worker started without one, or a default folder that is not there)
    if (dir === null || !existsSync(join(dir, PROJECT_FILE))) throw new NoSnapshotError(db.name);
    const { project, diagnostics } = await loadProject(dir, { env });
    if (!project) throw new ProjectInvalidError(diagnostics);
    await pushSnapshot(db, { files: await readProjectFiles(dir), author: opts.author ?? cliAuthor(), note: 'first push' });
    snapshot = (await latestSnapshot(db))!;
  }
  const { project, diagnostics } = await loadSnapshot(snapshot, env, opts.cacheDir);
  return assemble({ project, diagnostics, db, target: url, snapshotId: snapshot.id, env, simulate: !!opts.simulate, cacheDir: opts.cacheDir });
}

/** The snapshot's files in their private folder, loaded and checked like a folder on disk. */
async function loadSnapshot(snapshot: Snapshot, env: Env, cacheDir?: string): Promise<{ project: Project; diagnostics: Diagnostic[] }> {
  const { dir } = await materializeProject(snapshot.files, { cacheDir, origin: `snapshot ${snapshot.id}` });
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) throw new ProjectInvalidError(diagnostics, `snapshot ${snapshot.id}`);
  return { project, diagnostics };
}

async function assemble(p: {
  project: Project;
  diagnostics: Diagnostic[];
  db: Db;
  target: string;
  snapshotId: number | null;
  env: Env;
  simulate: boolean;
  cacheDir?: string;
}): Promise<Session> {
  const { project, db } = p;
  // each CLI process starts its own simulator: offset the chaos seed by the runs already stored
  const simulated = p.simulate ? await simulateProject(project, { seedOffset: await countRuns(db) }) : null;
  const session: Session = {
    project,
    db,
    target: p.target,
    snapshotId: p.snapshotId,
    providers: simulated?.providers ?? project.providers,
    env: simulated?.env ?? p.env,
    simulated,
    warnings: simulated ? [] : p.diagnostics.filter((d) => d.severity === 'warning'),
    close: async () => {
      await simulated?.close();
    },
  };
  openedWith.set(session, { env: p.env, cacheDir: p.cacheDir });
  return session;
}

/**
 * The session to run the next flow with: `prev` itself while the newest snapshot is the one it
 * runs (one cheap query), else a session of the newest snapshot over the same database and
 * simulator — a worker calls it before each run, the dashboard before each request. SQLite mode:
 * always `prev` (the folder is the project). The new session shares `prev`'s database and
 * simulator: close one of them, not both. Throws ProjectInvalidError when the newest snapshot
 * fails check (the caller may keep `prev`).
 */
export async function currentSession(prev: Session): Promise<Session> {
  if (prev.snapshotId === null) return prev;
  const id = await latestSnapshotId(prev.db);
  if (id === null || id === prev.snapshotId) return prev;
  const snapshot = await getSnapshot(prev.db, id);
  if (!snapshot) return prev; // cannot happen: snapshots are never deleted
  const opened = openedWith.get(prev) ?? { env: process.env };
  const { project, diagnostics } = await loadSnapshot(snapshot, opened.env, opened.cacheDir);
  // the simulator keeps the chaos it started with, as when the dashboard reloads a folder
  const routed = prev.simulated ? routeToSimulator(project, prev.simulated.sim) : { providers: project.providers, env: opened.env };
  const next: Session = {
    ...prev,
    project,
    snapshotId: snapshot.id,
    providers: routed.providers,
    env: routed.env,
    warnings: prev.simulated ? [] : diagnostics.filter((d) => d.severity === 'warning'),
  };
  openedWith.set(next, opened);
  return next;
}

const refreshing = new WeakMap<Session, Promise<boolean>>();

/**
 * currentSession applied to `s` in place, for a session object many requests share (the
 * dashboard's): its project, providers, env, warnings and snapshotId become the newest
 * snapshot's; runs already going keep the project they started with. Resolves with whether it
 * switched. Concurrent calls share one check.
 */
export function refreshSession(s: Session): Promise<boolean> {
  if (s.snapshotId === null) return Promise.resolve(false);
  const inFlight = refreshing.get(s);
  if (inFlight) return inFlight;
  const done = (async () => {
    const next = await currentSession(s);
    if (next === s) return false;
    Object.assign(s, { project: next.project, snapshotId: next.snapshotId, providers: next.providers, env: next.env, warnings: next.warnings });
    return true;
  })().finally(() => refreshing.delete(s));
  refreshing.set(s, done);
  return done;
}
