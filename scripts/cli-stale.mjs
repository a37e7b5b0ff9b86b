// Whether dist/cli (scripts/build-cli.mjs) must be rebuilt before the CLI runs: on the start-up path
// of every `aqven` command, so it reads one small manifest and stats each input once (about 1 ms).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** True when there is no build, or a file it was built from changed, moved or was deleted since. */
export function isCliStale(root) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(root, 'dist', 'cli', 'manifest.json'), 'utf8'));
  } catch {
    return true;
  }
  if (!Array.isArray(manifest.inputs) || typeof manifest.builtAt !== 'number') return true;
  for (const f of manifest.inputs) {
    const s = statSync(join(root, f), { throwIfNoEntry: false });
    if (!s || s.mtimeMs > manifest.builtAt) return true;
  }
  return false;
}
