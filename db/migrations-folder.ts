// Where the migrations are (DESIGN: Storage): drizzle/ for SQLite, drizzle/pg/ for PostgreSQL, found
// from AQVEN_MIGRATIONS, AQVEN_ROOT, this file's checkout, or the working directory.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function migrationsFolder(dialect: 'sqlite' | 'pg'): string {
  const sub = dialect === 'pg' ? 'pg' : '';
  const roots = [process.env.AQVEN_MIGRATIONS, process.env.AQVEN_ROOT && join(process.env.AQVEN_ROOT, 'drizzle')];
  try {
    roots.push(join(dirname(fileURLToPath(import.meta.url)), '..', 'drizzle'));
  } catch {
    // bundled by Next: import.meta.url is not a file URL; fall back to the working directory
  }
  roots.push(join(process.cwd(), 'drizzle'));
  const found = roots
    .filter((c): c is string => !!c)
    .map((c) => join(c, sub))
    .find((c) => existsSync(join(c, 'meta', '_journal.json')));
  if (!found) throw new Error(`AQVEN ${dialect === 'pg' ? 'PostgreSQL ' : ''}migrations folder not found (set AQVEN_ROOT to the AQVEN checkout)`);
  return found;
}
