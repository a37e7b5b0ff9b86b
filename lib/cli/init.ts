// `aqven init DIR [--template NAME]` (DESIGN: "CLI"): a new project copied from templates/.
// Bad usage (unknown template, a DIR that is not empty) exits 2.
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { parseDocument } from 'yaml';
import { type CliIo, processIo } from './io';

export const DEFAULT_TEMPLATE = 'blank';

/** Files never copied from a template: its run database. */
const SKIP = new Set(['.aqven']);

export function templatesDir(): string {
  return fileURLToPath(new URL('../../templates/', import.meta.url));
}

export async function listTemplates(root: string = templatesDir()): Promise<string[]> {
  try {
    const entries = await readdir(root, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

export class InitError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'InitError';
  }
}

async function copyTree(from: string, to: string, rel = ''): Promise<string[]> {
  await mkdir(to, { recursive: true });
  const files: string[] = [];
  for (const e of await readdir(from, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) files.push(...(await copyTree(join(from, e.name), join(to, e.name), r)));
    else if (e.isFile()) {
      await writeFile(join(to, e.name), await readFile(join(from, e.name)));
      files.push(r);
    }
  }
  return files;
}

/** A project name from a folder name: letters, digits, "-" and "_". */
export function projectNameFor(dir: string): string {
  const name = basename(resolve(dir))
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '');
  return name || 'project';
}

export interface InitResult {
  dir: string;
  name: string;
  template: string;
  files: string[];
}

export async function initProject(dir: string, template: string = DEFAULT_TEMPLATE, root: string = templatesDir()): Promise<InitResult> {
  // an empty name would be the working directory itself ("  is not empty")
  if (dir.trim() === '') throw new InitError('the folder name is empty: give the folder of the new project, e.g. aqven init support-bot');
  const templates = await listTemplates(root);
  if (!templates.includes(template)) {
    throw new InitError(`unknown template "${template}"; available templates: ${templates.join(', ') || '(none)'}`);
  }
  const target = resolve(dir);
  const existing = await stat(target).catch(() => null);
  if (existing && !existing.isDirectory()) throw new InitError(`${dir} exists and is not a folder`);
  if (existing && (await readdir(target)).length > 0) throw new InitError(`${dir} is not empty; give a new or empty folder`);

  const files = await copyTree(join(root, template), target);
  const name = projectNameFor(target);
  const projectFile = join(target, 'aqven.yaml');
  const doc = parseDocument(await readFile(projectFile, 'utf8'));
  const node = doc.get('name', true);
  if (node && typeof node === 'object' && 'value' in node) (node as { value: unknown }).value = name;
  else doc.set('name', name);
  await writeFile(projectFile, doc.toString());
  return { dir: target, name, template, files: files.sort() };
}

export async function runInit(dir: string, opts: { template?: string }, io: CliIo = processIo): Promise<number> {
  try {
    const r = await initProject(dir, opts.template ?? DEFAULT_TEMPLATE);
    io.out(`Created project "${r.name}" in ${dir} from template "${r.template}":\n${r.files.map((f) => `  ${f}`).join('\n')}\n`);
    io.out(`Next: aqven check --project ${dir}\n`);
    return 0;
  } catch (err) {
    if (err instanceof InitError) {
      io.err(`aqven init: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

export function registerInit(program: Command, io: CliIo = processIo): Command {
  return program
    .command('init')
    .description('create a new project from a template')
    .argument('<dir>', 'folder of the new project (new or empty)')
    .option('--template <name>', `template in templates/ (default: ${DEFAULT_TEMPLATE})`)
    .action(async (dir: string, opts: { template?: string }) => {
      io.exit(await runInit(dir, opts, io));
    });
}
