// Test helper: writes a small project into a fresh temp folder (used by lib/project/*.test.ts).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const BASE_FILES: Record<string, string> = {
  'aqven.yaml': 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "fixture"\n',
  'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\n',
  'flows/ask.yaml': [
    'apiVersion: "aqven/v1"',
    'kind: "Flow"',
    'input:',
    '  type: object',
    '  properties: { question: { type: string } }',
    'nodes:',
    '  answer:',
    '    agent: "helper"',
    '    prompt: "Answer: {{ input.question }}"',
    '',
  ].join('\n'),
};

/** Files of BASE_FILES overridden by `files`; a value of null leaves a file out. */
export async function writeProject(files: Record<string, string | null> = {}, base: Record<string, string> = BASE_FILES): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aqven-project-'));
  const all: Record<string, string | null> = { ...base, ...files };
  for (const [file, text] of Object.entries(all)) {
    if (text === null) continue;
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  return dir;
}

/** 1-based line:col of the first occurrence of `needle` in `text` (after `after`, if given). */
export function positionOf(text: string, needle: string, after?: string): { line: number; col: number } {
  const from = after ? text.indexOf(after) : 0;
  const i = text.indexOf(needle, from < 0 ? 0 : from);
  if (i < 0) throw new Error(`"${needle}" not found`);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, col: before[before.length - 1].length + 1 };
}
