// What `aqven check` reads of the run database for W_SCHEMA_LIMIT (DESIGN: CLI): the newest
// measured limits of the models the project's agents call. The database is opened as it is —
// read-only, never created, migrated or swept (db/status-queries.ts's inspectDatabase) — and a
// database that is not there, lacks the table, cannot be read or does not answer within
// READ_LIMITS_MS means no limits: check never fails or writes because of them. Imported only when
// there may be a database; a SQLite file with no measurement is answered with better-sqlite3 alone,
// so `aqven check` beside a run history loads no query builder (the CLI start bench's `check`).
import { readProjectText } from '@/lib/project/read-text';
import { schemaLimitDiagnostics, type MeasuredLimit } from '@/lib/project/schema-limits';
import type { Diagnostic, Project } from '@/lib/project';

/** A PostgreSQL server that does not answer in this long is skipped, not waited for. */
export const READ_LIMITS_MS = 3000;

type Env = Record<string, string | undefined>;

/** Whether the SQLite file at `path` holds any measurement: one read-only look, nothing else loaded. */
async function sqliteHasLimits(path: string): Promise<boolean> {
  const { default: Database } = await import('better-sqlite3');
  let conn;
  try {
    conn = new Database(path, { readonly: true, fileMustExist: true });
    const table = conn.prepare("select 1 from sqlite_master where type = 'table' and name = 'model_limits'").get();
    return table !== undefined && conn.prepare('select 1 from model_limits limit 1').get() !== undefined;
  } catch {
    return false;
  } finally {
    conn?.close();
  }
}

/** The newest measurement per (model, dimension) of the project's models; [] when there is none to read. */
export async function readMeasuredLimits(project: Project, env: Env): Promise<MeasuredLimit[]> {
  const models = [...new Set(Object.values(project.agents).flatMap((a) => [a.model, ...a.fallbackModels]))];
  if (models.length === 0) return [];
  // AQVEN_DATABASE_URL names a PostgreSQL database (databaseTarget); else the project's SQLite file
  if (!env.AQVEN_DATABASE_URL?.trim() && !(await sqliteHasLimits(project.databasePath))) return [];
  const [{ databaseTarget }, { hasTable, inspectDatabase }, { latestModelLimits }] = await Promise.all([
    import('@/db/client'),
    import('@/db/status-queries'),
    import('@/db/limits-queries'),
  ]);
  const target = databaseTarget(project.databasePath, env);
  let opened: ReturnType<typeof inspectDatabase>;
  try {
    opened = inspectDatabase(target);
  } catch {
    return [];
  }
  if (!opened) return [];
  const { db, close } = opened;
  let timer: NodeJS.Timeout | undefined;
  try {
    const read = (async () => ((await hasTable(db, 'model_limits')) ? latestModelLimits(db, models) : []))();
    const late = new Promise<MeasuredLimit[]>((resolve) => {
      timer = setTimeout(() => resolve([]), READ_LIMITS_MS);
      timer.unref();
    });
    return await Promise.race([read.catch(() => []), late]);
  } finally {
    clearTimeout(timer);
    close().catch(() => undefined);
  }
}

/** W_SCHEMA_LIMIT for every node of `project` asking more than its models were measured to hold. */
export async function schemaLimitWarnings(project: Project, env: Env): Promise<Diagnostic[]> {
  const limits = await readMeasuredLimits(project, env);
  return schemaLimitDiagnostics(project, limits, async (file) => {
    const text = await readProjectText(project.dir, file);
    return typeof text === 'string' ? text : null;
  });
}
