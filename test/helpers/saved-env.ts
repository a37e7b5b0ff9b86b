// A test file that points the dashboard's server at its own project and database through
// process.env keeps what those variables were, and puts them back when it is done.

/** Remembers `keys` of process.env now; the function returned restores them (unset ones unset again). */
export function saveEnv(keys: readonly string[]): () => void {
  const before = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  return () => {
    for (const k of keys) {
      if (before[k] === undefined) delete process.env[k];
      else process.env[k] = before[k];
    }
  };
}
