// Runs bin/aqven.mjs as a user does: a real process, its exit status and output.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'aqven.mjs');

export interface AqvenResult {
  code: number | null;
  out: string;
  err: string;
}

export function aqven(args: string[], env: Record<string, string | undefined> = {}, opts: SpawnSyncOptions = {}): AqvenResult {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined, ...env },
    timeout: 60_000,
    ...opts,
  });
  return { code: res.status, out: String(res.stdout), err: String(res.stderr) };
}

/** Builds dist/cli now if a source changed (the bin does it on start), so no test pays for the build. */
export function ensureCliBuilt(): void {
  const res = aqven(['--version'], {}, { timeout: 120_000 });
  if (res.code !== 0) throw new Error(`the aqven CLI does not build or start:\n${res.err}`);
}
