// Lookups by a name a user supplied (a flow, agent, node, provider or model id from a request, a
// URL or a project file) in a record keyed by names. `record[name]` would answer "constructor",
// "toString" or "__proto__" with a member of Object.prototype; these answer only the record's own
// entries.

/** The record's own entry for `key`, or undefined. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
