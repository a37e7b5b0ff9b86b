// The agent file behind the policy form: read with a hash of its text (so a save can tell that
// the file was edited elsewhere meanwhile), and written atomically.
import 'server-only';
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Project } from '@/lib/project';
import { own } from '@/lib/shared/own';

export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export interface AgentFileText {
  /** relative to the project, e.g. "agents/classifier.yaml" */
  file: string;
  path: string;
  text: string;
  hash: string;
}

export async function readAgentFile(project: Project, agent: string): Promise<AgentFileText | null> {
  const def = own(project.agents, agent); // never a member of Object.prototype ("constructor")
  if (!def) return null;
  const path = join(project.dir, def.file);
  const text = await readFile(path, 'utf8');
  return { file: def.file, path, text, hash: textHash(text) };
}

/** Replaces the file in one step: a reader never sees half of it. */
export async function writeAgentFile(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, text, 'utf8');
  await rename(tmp, path);
}
