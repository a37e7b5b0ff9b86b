// A migrations folder as an older aqven shipped it: the current one without its newest `drop`
// migrations (or without every one from the migration tagged `…_<before>` on). Migrating a
// database with it gives a history "behind" this aqven (aqven db status,
// db migrate, db copy from an older file).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrationsFolder } from '@/db/migrations-folder';

export function olderMigrationsFolder(dialect: 'sqlite' | 'pg', drop: number | { before: string } = 1): { folder: string; latest: string } {
  const current = migrationsFolder(dialect);
  const folder = join(mkdtempSync(join(tmpdir(), 'aqven-old-migrations-')), dialect);
  mkdirSync(join(folder, 'meta'), { recursive: true });
  const journal = JSON.parse(readFileSync(join(current, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  // a count from the end, or every migration from the one whose tag ends with `_<before>` on
  const at = typeof drop === 'number' ? journal.entries.length - drop : journal.entries.findIndex((e) => e.tag.endsWith(`_${drop.before}`));
  if (at < 0) throw new Error(`no ${dialect} migration named ${JSON.stringify(drop)}`);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const e of journal.entries) copyFileSync(join(current, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
  return { folder, latest: journal.entries.at(-1)!.tag };
}
