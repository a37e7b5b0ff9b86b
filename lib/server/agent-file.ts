// The agent file behind the policy form: read with a hash of its text (so a save can tell that
// the file was edited elsewhere meanwhile), and saved — written atomically into the project folder
// (SQLite mode), or as a new snapshot on top of the newest one (PostgreSQL mode: DESIGN: Storage,
// "The project in the database").
import 'server-only';
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { latestSnapshot, pushSnapshot, SnapshotMovedError } from '@/db/snapshot-queries';
import type { Session } from '@/lib/flow/session';
import { checkProjectFiles, type Project } from '@/lib/project';
import { own } from '@/lib/shared/own';

export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export interface AgentFileText {
  /** relative to the project, e.g. "agents/classifier.yaml" */
  file: string;
  path: string;
  text: string;
  hash: string;
}

export async function readAgentFile(project: Project, agent: string): Promise<AgentFileText | null> {
  const def = own(project.agents, agent); // never a member of Object.prototype ("constructor")
  if (!def) return null;
  const path = join(project.dir, def.file);
  const text = await readFile(path, 'utf8');
  return { file: def.file, path, text, hash: textHash(text) };
}

/** Replaces the file in one step: a reader never sees half of it. */
export async function writeAgentFile(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, path);
}

export type SavedAgentFile =
  | { ok: true; snapshotId: number | null }
  /** the file is no longer the text the edit started from: changed (or removed) meanwhile */
  | { ok: false; conflict: 'changed' | 'removed'; snapshotId: number | null };

/** a push that lost the race to another push is made again on top of it, at most this often */
const SNAPSHOT_TRIES = 5;

/**
 * Saves `after` as the new text of `file`, edited from `before`. SQLite mode (`s.snapshotId` null):
 * the file in the project folder is replaced. PostgreSQL mode: a new snapshot — the newest one
 * with this file changed — when the newest snapshot still holds `before` (else a conflict, as a
 * file edited on disk is in SQLite mode); a push that comes in between is kept, never overwritten
 * (the save is made again on top of it). `author` and `note` go with the snapshot.
 */
export async function saveAgentFile(s: Session, file: AgentFileText, after: string, who: { author: string; note: string }): Promise<SavedAgentFile> {
  if (s.snapshotId === null) {
    await writeAgentFile(file.path, after);
    return { ok: true, snapshotId: null };
  }
  for (let i = 1; ; i++) {
    const latest = await latestSnapshot(s.db);
    if (!latest) return { ok: false, conflict: 'removed', snapshotId: null };
    const files = checkProjectFiles(latest.files, `snapshot ${latest.id}`);
    const now = own(files, file.file);
    if (now === undefined) return { ok: false, conflict: 'removed', snapshotId: latest.id };
    if (now !== file.text) return { ok: false, conflict: 'changed', snapshotId: latest.id };
    try {
      const pushed = await pushSnapshot(s.db, { files: { ...files, [file.file]: after }, author: who.author, note: who.note, basedOn: latest.id });
      return { ok: true, snapshotId: pushed.id };
    } catch (err) {
      if (!(err instanceof SnapshotMovedError) || i >= SNAPSHOT_TRIES) throw err;
    }
  }
}
