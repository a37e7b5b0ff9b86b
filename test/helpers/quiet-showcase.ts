// A showcase copy whose simulator answers at once and without chaos, its files dated an hour back
// (so a session's first look at the folder already trusts their stats), and the small edits the
// tests of a project folder in a long-lived process make to it.
import { readFile, rename, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectFilesHash, readProjectFiles } from '@/lib/project';
import { copyShowcase } from './showcase';

export const QUIET_PROJECT = 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "showcase"\nsimulate:\n  seed: 1\n  latency: { first_token_ms: 0, tokens_per_s: 0 }\n';

/** Sets the times of every project file of `dir` to `secondsAgo` in the past. */
export async function backdate(dir: string, secondsAgo = 3600): Promise<void> {
  const when = Date.now() / 1000 - secondsAgo;
  for (const path of Object.keys(await readProjectFiles(dir))) await utimes(join(dir, path), when, when);
}

export async function quietShowcase(): Promise<string> {
  const dir = copyShowcase();
  await writeFile(join(dir, 'aqven.yaml'), QUIET_PROJECT);
  await backdate(dir);
  return dir;
}

/** The hash a session of `dir` runs (and a snapshot of its files gets). */
export async function folderHash(dir: string): Promise<string> {
  return projectFilesHash(await readProjectFiles(dir));
}

/** `agents/NAME.yaml` with `output.retries` set to `n`, written as an editor saves: aside, then renamed into place. */
export async function setRetries(dir: string, agent: string, n: number): Promise<void> {
  const path = join(dir, 'agents', `${agent}.yaml`);
  const text = await readFile(path, 'utf8');
  const edited = text.replace(/retries: \d+/, `retries: ${n}`);
  if (edited === text && !text.includes(`retries: ${n}`)) throw new Error(`${path} has no output.retries to set`);
  await writeFile(`${path}.tmp`, edited);
  await rename(`${path}.tmp`, path);
}
