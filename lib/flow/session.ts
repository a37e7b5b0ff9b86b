// One place that turns a project into what a run needs: the checked project, its database, and
// its providers (real, or routed to the simulator). The CLI, the dashboard's server, the workers
// and the tests all start runs through here. SQLite mode: the project is the folder on disk.
// PostgreSQL mode (DESIGN: Storage, "The project in the database"): the project is the newest
// snapshot in the database, written to a private folder named by its hash and loaded from there;
// a long-lived process switches to a newer snapshot through currentSession / refreshSession.
// A long-lived process over a folder (the dashboard's server) sees the folder's edits the same way:
// refreshSession looks at the files' stats, reads and hashes them only when those changed, and
// loads the project again only when the hash did (DESIGN: Storage, "The project folder in a
// long-lived process").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { recordAuditOrWarn } from '@/db/audit-queries';
import { databaseTarget, openDatabase, sharedDatabaseUrl, type Db } from '@/db/client';
import { countRuns } from '@/db/queries';
import { cliAuthor, getSnapshot, latestSnapshot, latestSnapshotId, pushSnapshot, type Snapshot } from '@/db/snapshot-queries';
import type { ResolvedProvider } from '@/lib/engine/types';
import { loadProject, materializeProject, PROJECT_FILE, readProjectFiles, type Diagnostic, type Project } from '@/lib/project';
import { folderUnchanged, projectFilesHash, ProjectFilesError, projectFolderFingerprint, type FolderFingerprint } from '@/lib/project/project-files';
import { runModeFor, type RunMode } from './run-mode';
import { routeToSimulator, simulateProject, type SimulatedProviders } from './simulate';

type Env = Record<string, string | undefined>;

/** The first error of a list as one line: `agents/writer.yaml:4:8: E_MODEL …`, and how many more. */
function firstError(diagnostics: Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const d = errors[0];
  if (!d) return 'no error listed';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more error(s))` : '';
  return `${d.file}:${d.line}:${d.col}: ${d.code} ${d.message}${more}`;
}

export class ProjectInvalidError extends Error {
  constructor(
    readonly diagnostics: Diagnostic[],
    /** the project that fails, when it is not the folder given: "snapshot 7" */
    where?: string,
    /** the folder a running process loaded changed since, and fails check now: no run starts under the old files */
    changedFolder?: string,
  ) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super(
      changedFolder
        ? `the project folder ${changedFolder} changed and now fails aqven check: ${firstError(diagnostics)}; fix the file (\`aqven check\` lists every error) — no run was started under the files as they were`
        : where
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
  /**
   * sha256 of the project's files as this session loaded them (projectFilesHash: the snapshot's
   * hash, or the folder's files'); the runs it starts record it (`runs.project_hash`)
   */
  projectHash: string;
  providers: Record<string, ResolvedProvider>;
  env: Record<string, string | undefined>;
  simulated: SimulatedProviders | null;
  /** how runs run over this session's database (lib/flow/run-mode.ts): in-process on SQLite, queued for workers on PostgreSQL */
  mode: RunMode;
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
 * A folder session's view of its folder: the stats its files had when last seen, and the last
 * stats under which the folder failed check (with that error, so an unchanged broken folder is
 * not parsed again).
 */
interface FolderState {
  seen: FolderFingerprint;
  failed: { seen: FolderFingerprint; error: ProjectInvalidError } | null;
  /** how often the folder was looked at, its files read and hashed, and the project loaded (parsed), since the session opened */
  stats: FolderStats;
}

export interface FolderStats {
  checks: number;
  reads: number;
  loads: number;
}

const folders = new WeakMap<Session, FolderState>();

/** How often a folder session's refreshes looked at, read and loaded its folder (null for a snapshot session). */
export function folderStats(s: Session): FolderStats | null {
  const st = folders.get(s);
  return st ? { ...st.stats } : null;
}

/** the project files' hash, or null when they cannot be read as a project (too big, not UTF-8, no aqven.yaml) */
async function filesHash(dir: string): Promise<string | null> {
  try {
    return projectFilesHash(await readProjectFiles(dir));
  } catch (err) {
    if (err instanceof ProjectFilesError) return null;
    throw err;
  }
}

/** how often a folder that changes while it is loaded is loaded again before giving up */
const LOAD_TRIES = 3;

type FolderLoad =
  | { same: true; seen: FolderFingerprint }
  | { same: false; seen: FolderFingerprint; project: Project; diagnostics: Diagnostic[]; hash: string }
  | { same: false; seen: FolderFingerprint; project: null; diagnostics: Diagnostic[] };

/**
 * Loads the folder with the hash of the files the load read: the files are hashed before and
 * after the load, and loaded again when they changed meanwhile. `known`: the hash the caller runs;
 * files that still hash to it are not loaded (`same`). `seen` is taken first, so a change after
 * it shows at the next look.
 */
function loadFolder(dir: string, env: Env, stats: FolderStats | null): Promise<Exclude<FolderLoad, { same: true }>>;
function loadFolder(dir: string, env: Env, stats: FolderStats | null, known: string): Promise<FolderLoad>;
async function loadFolder(dir: string, env: Env, stats: FolderStats | null, known?: string): Promise<FolderLoad> {
  for (let i = 1; ; i++) {
    const seen = await projectFolderFingerprint(dir);
    const before = await filesHash(dir);
    if (stats) stats.reads++;
    if (known !== undefined && before === known) return { same: true, seen };
    const { project, diagnostics } = await loadProject(dir, { env });
    if (stats) stats.loads++;
    if (!project) return { same: false, seen, project: null, diagnostics };
    const after = await filesHash(dir);
    if (after !== null && after === before) return { same: false, seen, project, diagnostics, hash: after };
    if (i >= LOAD_TRIES) throw new Error(`the project folder ${dir} changed while it was loaded, ${LOAD_TRIES} times over; try again once it is saved`);
  }
}

/**
 * The session of a project. SQLite mode: the folder `dir`, its database the project's SQLite
 * file. PostgreSQL mode (AQVEN_DATABASE_URL=postgres://…): the newest snapshot of that database;
 * when it has none yet, the folder `dir` (which must pass check) is pushed first, as
 * "first push"; with no folder (or none with an aqven.yaml) either, NoSnapshotError.
 */
export async function openSession(dir: string | null, opts: SessionOptions = {}): Promise<Session> {
  const env = opts.env ?? process.env;
  // the URL is known before any project is loaded: in PostgreSQL mode the project comes from it
  const url = sharedDatabaseUrl(env);
  if (url !== null) return openSnapshotSession(url, dir, opts, env);
  if (dir === null) throw new Error('no project folder given (and AQVEN_DATABASE_URL is not a postgres:// URL)');
  const loaded = await loadFolder(dir, env, null);
  if (!loaded.project) throw new ProjectInvalidError(loaded.diagnostics);
  const { project, diagnostics, hash, seen } = loaded;
  const target = databaseTarget(project.databasePath, env);
  const db = await openDatabase(target);
  const session = await assemble({ project, diagnostics, db, target, snapshotId: null, projectHash: hash, env, simulate: !!opts.simulate, cacheDir: opts.cacheDir });
  folders.set(session, { seen, failed: null, stats: { checks: 0, reads: 0, loads: 0 } });
  return session;
}

async function openSnapshotSession(url: string, dir: string | null, opts: SessionOptions, env: Env): Promise<Session> {
  const db = await openDatabase(url);
  let snapshot = await latestSnapshot(db);
  if (!snapshot) {
    // no folder to push (a worker started without one, or a default folder that is not there)
    if (dir === null || !existsSync(join(dir, PROJECT_FILE))) throw new NoSnapshotError(db.name);
    const { project, diagnostics } = await loadProject(dir, { env });
    if (!project) throw new ProjectInvalidError(diagnostics);
    const first = await pushSnapshot(db, { files: await readProjectFiles(dir), author: opts.author ?? cliAuthor(), note: 'first push' });
    snapshot = (await latestSnapshot(db))!;
    // another process pushing the same first files at once stores nothing: only the push that stored them is recorded
    if (first.created)
      await recordAuditOrWarn(
        db,
        { kind: 'project.pushed', actor: opts.author ?? cliAuthor(), target: `snapshot ${first.id}`, detail: { created: true, note: 'first push' } },
        (line) => console.error(`aqven: ${line}`),
      );
  }
  const { project, diagnostics } = await loadSnapshot(snapshot, env, opts.cacheDir);
  return assemble({ project, diagnostics, db, target: url, snapshotId: snapshot.id, projectHash: snapshot.hash, env, simulate: !!opts.simulate, cacheDir: opts.cacheDir });
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
  projectHash: string;
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
    projectHash: p.projectHash,
    providers: simulated?.providers ?? project.providers,
    env: simulated?.env ?? p.env,
    simulated,
    mode: runModeFor(db),
    warnings: simulated ? [] : p.diagnostics.filter((d) => d.severity === 'warning'),
    close: async () => {
      await simulated?.close();
    },
  };
  openedWith.set(session, { env: p.env, cacheDir: p.cacheDir });
  return session;
}

/** What changes in a session when it moves to another project: the project and what derives from it. */
type ProjectPart = Pick<Session, 'project' | 'snapshotId' | 'projectHash' | 'providers' | 'env' | 'warnings'>;

/** `project` in `prev`'s place: routed to the same simulator (which keeps the chaos it started with), or to its real providers. */
function projectPart(prev: Session, project: Project, diagnostics: Diagnostic[], ids: { snapshotId: number | null; projectHash: string }): ProjectPart {
  const opened = openedWith.get(prev) ?? { env: process.env };
  const routed = prev.simulated ? routeToSimulator(project, prev.simulated.sim) : { providers: project.providers, env: opened.env };
  return {
    project,
    ...ids,
    providers: routed.providers,
    env: routed.env,
    warnings: prev.simulated ? [] : diagnostics.filter((d) => d.severity === 'warning'),
  };
}

/**
 * The session to run the next flow with: `prev` itself while the newest snapshot is the one it
 * runs (one cheap query), else a session of the newest snapshot over the same database and
 * simulator — a worker calls it before each run. SQLite mode: always `prev` (a folder session is
 * brought up to date in place, by refreshSession). The new session shares `prev`'s database and
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
  const next: Session = { ...prev, ...projectPart(prev, project, diagnostics, { snapshotId: snapshot.id, projectHash: snapshot.hash }) };
  openedWith.set(next, opened);
  return next;
}

/**
 * A folder session brought up to date in place (DESIGN: Storage, "The project folder in a
 * long-lived process"): the files' stats first (no file read); when they changed, the files are
 * read and hashed; only when the hash differs from the session's is the project loaded again.
 * A folder that now fails check throws ProjectInvalidError naming the file, and the session keeps
 * its project, which the caller must not run: no run starts under files that are no longer there.
 */
async function refreshFolder(s: Session): Promise<boolean> {
  const st = folders.get(s);
  if (!st) return false; // not opened by openSession: nothing to compare with
  st.stats.checks++;
  const dir = s.project.dir;
  const now = await projectFolderFingerprint(dir);
  if (folderUnchanged(st.seen, now)) return false;
  if (st.failed && folderUnchanged(st.failed.seen, now)) throw st.failed.error;
  const env = (openedWith.get(s) ?? { env: process.env }).env;
  const loaded = await loadFolder(dir, env, st.stats, s.projectHash);
  if (loaded.same) {
    Object.assign(st, { seen: loaded.seen, failed: null }); // touched, or edited and put back
    return false;
  }
  if (!loaded.project) {
    const error = new ProjectInvalidError(loaded.diagnostics, undefined, dir);
    st.failed = { seen: loaded.seen, error };
    throw error;
  }
  Object.assign(s, projectPart(s, loaded.project, loaded.diagnostics, { snapshotId: null, projectHash: loaded.hash }));
  Object.assign(st, { seen: loaded.seen, failed: null });
  return true;
}

/** the newest snapshot in `s`'s place (PostgreSQL mode) */
async function refreshSnapshot(s: Session): Promise<boolean> {
  const next = await currentSession(s);
  if (next === s) return false;
  const { project, snapshotId, projectHash, providers, env, warnings } = next;
  Object.assign(s, { project, snapshotId, projectHash, providers, env, warnings });
  return true;
}

/** per session: the refresh waiting to start (callers join it) and the end of the one before */
const refreshes = new WeakMap<Session, { waiting: Promise<boolean> | null; tail: Promise<unknown> }>();

/**
 * The session `s` brought up to date in place, for a session object many requests share (the
 * dashboard's) — its project, providers, env, warnings, snapshotId and projectHash become the
 * project's as it is now: the newest snapshot (PostgreSQL mode), or the folder's files (SQLite
 * mode: refreshFolder); runs already going keep the project they started with. Resolves with
 * whether it switched. Refreshes of one session run one at a time, so an older look never
 * overwrites a newer one; callers that come while one waits to start share it (it looks after all
 * of them came), while one that is already looking is followed by a fresh one. Throws
 * ProjectInvalidError when the new project fails check; the session then stays as it was.
 */
export function refreshSession(s: Session): Promise<boolean> {
  let r = refreshes.get(s);
  if (!r) refreshes.set(s, (r = { waiting: null, tail: Promise.resolve() }));
  if (r.waiting) return r.waiting;
  const gate = r;
  const next = gate.tail.then(() => {
    gate.waiting = null; // looking from now on: later callers need a look of their own
    return s.snapshotId === null ? refreshFolder(s) : refreshSnapshot(s);
  });
  gate.waiting = next;
  gate.tail = next.catch(() => undefined);
  return next;
}
