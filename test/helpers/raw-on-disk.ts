// Which raw values still stand in the bytes of a database folder's files (aqven.db, -wal, -shm):
// the check behind "failure text is never written raw".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function rawValuesOnDisk(dbDir: string, raw: readonly string[]): string[] {
  const found: string[] = [];
  for (const f of readdirSync(dbDir)) {
    const bytes = readFileSync(join(dbDir, f));
    for (const v of raw) if (bytes.includes(Buffer.from(v))) found.push(`${v} in ${f}`);
  }
  return found;
}
