// Typed statements (DESIGN: Storage, "Typed statements"): every query of db/ is built with drizzle
// over db/schema.ts, so a renamed or removed column is a type error, never a hand-kept SQL string.
// The statements of the hot path (db/run-store.ts, the fence check of db/run-lease.ts) are built the
// same way and prepared here: drizzle's SQL text, bound by a plan made once, positionally. Drizzle's
// own prepared query re-plans its parameters (a class walk per value) and, for a read, maps the row,
// on every call: measured, that made the store's work per run about 40 % dearer (DESIGN: Storage).
import type Database from 'better-sqlite3';
import { Column, getTableColumns, is, Param, Placeholder, sql, type SQL } from 'drizzle-orm';
import type { AnySQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';

/**
 * A placeholder per column key named (`{ turns: ? }` for `['turns']`), named after the key and
 * encoded by its column (JSON.stringify for JSON columns, 1/0 for booleans; an undefined JSON value
 * is NULL): insert values and update sets typed against the schema.
 */
export function placeholders<T extends SQLiteTable, K extends keyof T['_']['columns'] & string>(table: T, keys: readonly K[]): Record<K, SQL> {
  const cols = getTableColumns(table) as Record<string, AnySQLiteColumn>;
  return Object.fromEntries(keys.map((k) => [k, sql`${sql.param(sql.placeholder(k), cols[k])}`])) as Record<K, SQL>;
}

/** `excluded.<column>` of an upsert: the value the conflicting insert proposed */
export const excluded = (col: AnySQLiteColumn) => sql`excluded.${sql.identifier(col.name)}`;

/** A query built by drizzle's query builder, not yet prepared: its SQL text and its parameters. */
export interface BuiltQuery {
  toSQL(): { sql: string; params: unknown[] };
}

/** The arguments of a statement, one per placeholder name, in the order the names were given. */
type Args<K extends readonly string[]> = { [I in keyof K]: unknown };

const identity = Column.prototype.mapToDriverValue;

/**
 * The binding plan of `query` for arguments given in `order`: SQL parameter i is a constant of the
 * query, or argument `pos[i]`, encoded by its column when the column encodes (JSON, boolean). A
 * placeholder missing from `order` (or a name of `order` the query lacks) throws here, once.
 */
function plan(query: BuiltQuery, order: readonly string[]) {
  const { sql: text, params } = query.toSQL();
  const n = params.length;
  const pos = new Array<number>(n).fill(-1);
  const consts = new Array<unknown>(n);
  const enc = new Array<((v: unknown) => unknown) | null>(n).fill(null);
  const used = new Set<string>();
  params.forEach((p, i) => {
    let name: string | null = null;
    if (is(p, Placeholder)) name = p.name;
    else if (is(p, Param) && is(p.value, Placeholder)) {
      name = p.value.name;
      const e = p.encoder;
      const map = e && 'mapToDriverValue' in e ? e.mapToDriverValue : identity;
      if (map !== identity) enc[i] = map.bind(e);
    } else consts[i] = p;
    if (name === null) return;
    pos[i] = order.indexOf(name);
    if (pos[i] < 0) throw new Error(`placeholder "${name}" of \`${text}\` is not among the arguments (${order.join(', ')})`);
    used.add(name);
  });
  const unused = order.filter((k) => !used.has(k));
  if (unused.length) throw new Error(`\`${text}\` has no placeholder ${unused.map((k) => `"${k}"`).join(', ')}`);
  // one array per statement, filled on each call: better-sqlite3 binds it before the call returns
  const bound = new Array<unknown>(n);
  const bind = (args: readonly unknown[]) => {
    for (let i = 0; i < n; i++) {
      const at = pos[i]!;
      if (at < 0) bound[i] = consts[i];
      else {
        const f = enc[i];
        bound[i] = f ? f(args[at]) : args[at];
      }
    }
    return bound;
  };
  return { text, bind };
}

/** A prepared write: `run(...args)` binds the arguments in the order of its placeholder names. */
export interface WriteStatement<K extends readonly string[]> {
  run(...args: Args<K>): Database.RunResult;
}

/**
 * Prepares a write built with drizzle (`db.insert(t).values(placeholders(t, keys))`,
 * `db.update(t).set(…).where(eq(t.id, sql.placeholder('id')))`) on `client`, once; `order` names
 * its placeholders in the order `run` takes their values.
 */
export function writeStatement<const K extends readonly string[]>(client: Database.Database, query: BuiltQuery, order: K): WriteStatement<K> {
  const { text, bind } = plan(query, order);
  const stmt = client.prepare(text);
  return { run: (...args) => stmt.run(bind(args)) };
}

/** A prepared read of one value: the first column of the first row, or undefined when there is no row. */
export interface ValueStatement<V, K extends readonly string[]> {
  get(...args: Args<K>): V | undefined;
}

/**
 * Prepares a read of a single column built with drizzle (`db.select({ until: t.pausedUntil })…`)
 * on `client`, once: the value as stored (for the integer and text columns it is used for, the
 * value drizzle would give). `order` names its placeholders in the order `get` takes their values.
 */
export function valueStatement<V, const K extends readonly string[]>(
  client: Database.Database,
  query: BuiltQuery & { get(): Record<string, V> | undefined },
  order: K,
): ValueStatement<V, K> {
  const { text, bind } = plan(query, order);
  const stmt = client.prepare(text).pluck();
  return { get: (...args) => stmt.get(bind(args)) as V | undefined };
}

/**
 * The same statement for PostgreSQL (built over db/schema-pg.ts's tables, `$1`… parameters): its
 * text, and `values(args)` — a fresh array per call, as node-postgres sends it later.
 */
export function pgStatement<const K extends readonly string[]>(query: BuiltQuery, order: K): { text: string; values(args: Args<K>): unknown[] } {
  const { text, bind } = plan(query, order);
  return { text, values: (args) => bind(args).slice() };
}
