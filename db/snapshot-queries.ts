// The project's files as versioned snapshots (DESIGN: Storage, "The project in the database"): in
// PostgreSQL mode every worker and dashboard runs the newest one. A push whose files hash like the
// newest snapshot's stores nothing; pushes at once take turns, so the comparison and the insert
// see the same newest snapshot.
import { userInfo } from 'node:os';
import { desc, eq, sql } from 'drizzle-orm';
import { checkProjectFiles, projectFilesHash, type ProjectFiles } from '@/lib/project/project-files';
import { transaction } from './tx';
import type { Db, Tables } from './types';

export interface SnapshotInfo {
  id: number;
  /** sha256 of the sorted paths and texts (projectFilesHash) */
  hash: string;
  /** who made it: "cli:<login>", "dashboard" */
  author: string | null;
  /** what made it: "push", "first push", "policy <agent>" */
  note: string | null;
  createdAt: number;
}

export interface Snapshot extends SnapshotInfo {
  /**
   * path → text, as stored. Not trusted: whatever writes them to disk checks every path and text
   * first (writeProjectFiles, materializeProject, checkProjectFiles in lib/project/project-files.ts).
   */
  files: unknown;
}

/** The newest snapshot is no longer the one a change was based on (pushSnapshot's `basedOn`). */
export class SnapshotMovedError extends Error {
  constructor(
    readonly basedOn: number | null,
    readonly latest: number | null,
  ) {
    super(`the project changed meanwhile: the newest snapshot is ${latest ?? 'none'}, not ${basedOn ?? 'none'}`);
    this.name = 'SnapshotMovedError';
  }
}

/** The author of what a command line does (a push, a first push): `cli:<login>`, the OS login. */
export function cliAuthor(): string {
  let login: string | undefined;
  try {
    login = userInfo().username;
  } catch {
    login = process.env.USER ?? process.env.USERNAME;
  }
  return `cli:${login || 'unknown'}`;
}

/** The key of the push lock (a PostgreSQL advisory lock: "snaps" in ASCII). */
const PUSH_LOCK = 0x736e617073;

const infoColumns = (t: Tables['projectSnapshots']) => ({ id: t.id, hash: t.hash, author: t.author, note: t.note, createdAt: t.createdAt });

/**
 * Stores `files` as the newest snapshot, unless they hash like the newest one: then nothing is
 * stored and that snapshot's id comes back with `created: false`. With `basedOn`, refuses
 * (SnapshotMovedError) when the newest snapshot is another one — a change made on top of a
 * snapshot never drops a push that came in between. One transaction: SQLite holds the write lock
 * (BEGIN IMMEDIATE), PostgreSQL an advisory lock until the commit, so two pushes take turns.
 */
export async function pushSnapshot(
  db: Db,
  s: { files: ProjectFiles; author?: string | null; note?: string | null; basedOn?: number | null; createdAt?: number },
): Promise<{ id: number; created: boolean; hash: string }> {
  const files = checkProjectFiles(s.files, 'the files to push');
  const hash = projectFilesHash(files);
  const t = db.t.projectSnapshots;
  return transaction(db, async (q) => {
    if (db.dialect === 'pg') {
      await q.select({ locked: sql`pg_advisory_xact_lock(${PUSH_LOCK})` }).from(sql`(values (0)) as one`);
    }
    const [latest] = await q.select({ id: t.id, hash: t.hash }).from(t).orderBy(desc(t.id)).limit(1);
    const latestId = latest ? Number(latest.id) : null;
    if (s.basedOn !== undefined && latestId !== s.basedOn) throw new SnapshotMovedError(s.basedOn, latestId);
    if (latest && latest.hash === hash) return { id: latestId!, created: false, hash };
    const [row] = await q
      .insert(t)
      .values({ files, hash, author: s.author ?? null, note: s.note ?? null, createdAt: s.createdAt ?? Date.now() })
      .returning({ id: t.id });
    return { id: Number(row!.id), created: true, hash };
  });
}

/** The newest snapshot with its files, or null when nothing was pushed yet. */
export async function latestSnapshot(db: Db): Promise<Snapshot | null> {
  const t = db.t.projectSnapshots;
  const [row] = await db.q
    .select({ ...infoColumns(t), files: t.files })
    .from(t)
    .orderBy(desc(t.id))
    .limit(1);
  return row ? { ...row, id: Number(row.id) } : null;
}

/** The newest snapshot's id (a cheap check: no files), or null. */
export async function latestSnapshotId(db: Db): Promise<number | null> {
  const t = db.t.projectSnapshots;
  const [row] = await db.q.select({ id: t.id }).from(t).orderBy(desc(t.id)).limit(1);
  return row ? Number(row.id) : null;
}

export async function getSnapshot(db: Db, id: number): Promise<Snapshot | null> {
  const t = db.t.projectSnapshots;
  const [row] = await db.q
    .select({ ...infoColumns(t), files: t.files })
    .from(t)
    .where(eq(t.id, id));
  return row ? { ...row, id: Number(row.id) } : null;
}

/** The newest `limit` snapshots, newest first, without their files. */
export async function listSnapshots(db: Db, limit = 20): Promise<SnapshotInfo[]> {
  const t = db.t.projectSnapshots;
  const rows = await db.q.select(infoColumns(t)).from(t).orderBy(desc(t.id)).limit(limit);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
