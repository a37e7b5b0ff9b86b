// Runs bin/aqven.mjs as a user does: a real process, its exit status and output; or the same
// command line in the test's own process (aqvenHere).
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureIo } from '@/lib/cli/io';
import { runCli } from '@/lib/cli/program';
import { saveEnv } from '../helpers/saved-env';

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

/**
 * The same command line run in this process (lib/cli/program.ts, output and status captured): for
 * bad arguments, exit statuses and output, without a process per call. `env` is set in process.env
 * for the call (AQVEN_SIMULATE and AQVEN_PROJECT unset unless given, as for `aqven`). Signals,
 * start-up and the launcher need the real process: `aqven`.
 */
export async function aqvenHere(args: string[], env: Record<string, string | undefined> = {}): Promise<AqvenResult> {
  const vars: Record<string, string | undefined> = { AQVEN_SIMULATE: undefined, AQVEN_PROJECT: undefined, ...env };
  const restore = saveEnv(Object.keys(vars));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const io = captureIo({ asProcess: true });
  try {
    const ended = await runCli(args, io);
    return { code: ended ?? io.code ?? 0, out: io.stdout, err: io.stderr };
  } finally {
    restore();
  }
}
