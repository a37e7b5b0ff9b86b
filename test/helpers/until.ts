// Waits for a condition the test cannot be told about (a child process, a file, a row), polling
// with a generous bound: the bound is a hang guard, not a timed assertion.
export async function until<T>(what: string, f: () => T | undefined | null | false, ms = 30_000, everyMs = 20): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
