// Reading a SQLite WAL file (https://sqlite.org/fileformat2.html#walformat) for bench/wal-frames.ts:
// the frames it holds — each a 24-byte header and one page — and which b-tree each written page
// belongs to, by the `dbstat` virtual table. A commit is the frame whose header carries the
// database's size after it (non-zero); a frame whose salts differ from the file header's is left
// over from before the WAL was started over, and is not counted.
import type Database from 'better-sqlite3';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

export interface WalFrame {
  page: number;
  /** the frame ends a transaction */
  commit: boolean;
}

/** The valid frames of a WAL file's bytes, in the order they were written; none for a WAL shorter than its header. */
export function walFrames(wal: Buffer): { pageSize: number; frames: WalFrame[] } {
  if (wal.length < WAL_HEADER) return { pageSize: 0, frames: [] };
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  const frames: WalFrame[] = [];
  for (let off = WAL_HEADER; off + FRAME_HEADER + pageSize <= wal.length; off += FRAME_HEADER + pageSize) {
    if (wal.readUInt32BE(off + 8) !== salt1 || wal.readUInt32BE(off + 12) !== salt2) break;
    frames.push({ page: wal.readUInt32BE(off), commit: wal.readUInt32BE(off + 4) !== 0 });
  }
  return { pageSize, frames };
}

/** The b-tree (table or index name, as `dbstat` names it) each page of `db` belongs to now. */
export function pageOwners(db: Database.Database): Map<number, string> {
  const owners = new Map<number, string>();
  for (const r of db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]) owners.set(r.pageno, r.name);
  return owners;
}

/** Frames per b-tree, most first; a page no b-tree holds any more (freed) counts as "free page". */
export function framesByTree(frames: WalFrame[], owners: Map<number, string>): [string, number][] {
  const by = new Map<string, number>();
  for (const { page } of frames) {
    const name = owners.get(page) ?? 'free page';
    by.set(name, (by.get(name) ?? 0) + 1);
  }
  return [...by].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
