// Typed statements (DESIGN: Storage, "Typed statements"): every query of db/ is built with drizzle
// over db/schema.ts, so a renamed or removed column is a type error, never a hand-kept SQL string.
// The statements of the hot path (db/run-store.ts, the fence check of db/run-lease.ts) are built the
// same way and prepared here: drizzle's SQL text, bound by a plan made once, by placeholder name
// (each value typed by its column: a misspelt or mistyped column does not compile). Drizzle's
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

/** A column's value as a statement binds it: the table's insert type, never left out (a nullable column takes null). */
export type ColumnValues<T extends SQLiteTable, K extends keyof T['$inferInsert']> = { [P in K]-?: T['$inferInsert'][P] };

/**
 * The values a statement binds, by placeholder name: `names` (checked against the query's
 * placeholders once, when it is prepared) and their type `V` (type only, never set), so that a
 * misspelt name or a value of another column's type does not compile.
 */
export interface Binding<V> {
  readonly names: readonly string[];
  readonly values?: V;
}

/** the placeholders of `keys`, each typed as `table`'s insert type has its column (`placeholders(table, keys)`'s values) */
export const bindColumns = <T extends SQLiteTable, const K extends keyof T['_']['columns'] & keyof T['$inferInsert'] & string>(
  _table: T,
  keys: readonly K[],
): Binding<ColumnValues<T, K>> => ({ names: keys });

/** placeholders not encoded by one column (a JSON text made once, a computed value): their type given */
export const bindValues = <V>(...names: (keyof V & string)[]): Binding<V> => ({ names });

type Intersect<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type ValuesOf<B> = B extends Binding<infer V> ? V : never;

/** one binding of several: a statement's columns, its raw values and the id of its row */
export const bindAll = <const B extends readonly Binding<object>[]>(...bs: B): Binding<Intersect<ValuesOf<B[number]>>> => ({ names: bs.flatMap((b) => b.names) });

const identity = Column.prototype.mapToDriverValue;

/**
 * The binding plan of `query` for values given by `names`: SQL parameter i is a constant of the
 * query, or the value named `key[i]`, encoded by its column when the column encodes (JSON,
 * boolean). A placeholder missing from `names` (or a name the query lacks) throws here, once.
 */
function plan(query: BuiltQuery, names: readonly string[]) {
  const { sql: text, params } = query.toSQL();
  const n = params.length;
  const key = new Array<string | null>(n).fill(null);
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
    if (!names.includes(name)) throw new Error(`placeholder "${name}" of \`${text}\` is not among the values (${names.join(', ')})`);
    key[i] = name;
    used.add(name);
  });
  const unused = names.filter((k) => !used.has(k));
  if (unused.length) throw new Error(`\`${text}\` has no placeholder ${unused.map((k) => `"${k}"`).join(', ')}`);
  // one array per statement, filled on each call: better-sqlite3 binds it before the call returns
  const bound = new Array<unknown>(n);
  const bind = (values: object) => {
    const v = values as Record<string, unknown>;
    for (let i = 0; i < n; i++) {
      const k = key[i];
      if (k === null) bound[i] = consts[i];
      else {
        const f = enc[i];
        bound[i] = f ? f(v[k]) : v[k];
      }
    }
    return bound;
  };
  return { text, bind };
}

/** A prepared write: `run(values)` binds each placeholder to the value of its name. */
export interface WriteStatement<V> {
  run(values: V): Database.RunResult;
}

/**
 * Prepares a write built with drizzle (`db.insert(t).values(placeholders(t, keys))`,
 * `db.update(t).set(…).where(eq(t.id, sql.placeholder('id')))`) on `client`, once; `binding`
 * names its placeholders and types their values (`bindColumns(t, keys)`).
 */
export function writeStatement<V>(client: Database.Database, query: BuiltQuery, binding: Binding<V>): WriteStatement<V> {
  const { text, bind } = plan(query, binding.names);
  const stmt = client.prepare(text);
  return { run: (values) => stmt.run(bind(values as object)) };
}

/** A prepared read of one value: the first column of the first row, or undefined when there is no row. */
export interface ValueStatement<R, V> {
  get(values: V): R | undefined;
}

/**
 * Prepares a read of a single column built with drizzle (`db.select({ until: t.pausedUntil })…`)
 * on `client`, once: the value as stored (for the integer and text columns it is used for, the
 * value drizzle would give). `binding` names its placeholders and types their values.
 */
export function valueStatement<R, V>(client: Database.Database, query: BuiltQuery & { get(): Record<string, R> | undefined }, binding: Binding<V>): ValueStatement<R, V> {
  const { text, bind } = plan(query, binding.names);
  const stmt = client.prepare(text).pluck();
  return { get: (values) => stmt.get(bind(values as object)) as R | undefined };
}

/**
 * The same statement for PostgreSQL (built over db/schema-pg.ts's tables, `$1`… parameters): its
 * text, and `values(v)` — a fresh array per call, as node-postgres sends it later.
 */
export function pgStatement<V>(query: BuiltQuery, binding: Binding<V>): { text: string; values(v: V): unknown[] } {
  const { text, bind } = plan(query, binding.names);
  return { text, values: (v) => bind(v as object).slice() };
}
