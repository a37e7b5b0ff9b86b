import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { checkProject, loadProject } from '@/lib/project';
import { initProject, listTemplates, registerInit, templatesDir } from './init';
import { captureIo } from './io';

async function init(args: string[]) {
  const io = captureIo();
  const program = new Command('aqven');
  registerInit(program, io);
  await program.parseAsync(['init', ...args], { from: 'user' });
  return io;
}

const KEY = { OPENROUTER_API_KEY: 'sk-test' };

describe('aqven init', () => {
  it('lists the blank and showcase templates', async () => {
    expect(await listTemplates()).toEqual(['blank', 'showcase']);
  });

  it('creates a blank project by default that passes check, named after its folder', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'aqven-init-')), 'support-bot');
    const io = await init([dir]);
    expect(io.code).toBe(0);
    expect(io.stdout).toContain('Created project "support-bot"');
    expect(await checkProject(dir, { env: KEY })).toEqual([]);
    const { project } = await loadProject(dir, { env: KEY });
    expect(project!.name).toBe('support-bot');
    expect(Object.keys(project!.agents)).toEqual(['assistant']);
    expect(Object.keys(project!.flows)).toEqual(['hello']);
    // the comments of the template survive the rename
    expect(await readFile(join(dir, 'aqven.yaml'), 'utf8')).toContain('# relative to the project folder');
  });

  it('creates the showcase from --template showcase', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'aqven-init-')), 'demo');
    const io = await init([dir, '--template', 'showcase']);
    expect(io.code).toBe(0);
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(diagnostics).toEqual([]);
    expect(Object.keys(project!.agents).sort()).toEqual(['classifier', 'extractor', 'gpt', 'writer']);
    expect(Object.keys(project!.flows).sort()).toEqual(['long-answer', 'order-intake', 'triage']);
  });

  it('the showcase template is the showcase the repository runs, file for file', async () => {
    const files = async (root: string) =>
      (await readdir(root, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes('.aqven'))
        .map((e) => relative(root, join(e.parentPath, e.name)))
        .sort();
    const template = join(templatesDir(), 'showcase');
    const showcase = join(process.cwd(), 'showcase');
    expect(await files(template)).toEqual(await files(showcase));
    // but for the schema line, whose path is from where each copy lives (init writes it afresh)
    const body = async (path: string) => (await readFile(path, 'utf8')).replace(/^# yaml-language-server: \$schema=\S+\n/, '');
    for (const f of await files(showcase)) expect(await body(join(template, f)), f).toBe(await body(join(showcase, f)));
  });

  it('accepts an existing empty folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aqven-init-'));
    const r = await initProject(dir);
    expect(r.files).toEqual(['agents/assistant.yaml', 'aqven.yaml', 'flows/hello.yaml']);
  });

  it('lists the templates and exits 2 on an unknown template', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'aqven-init-')), 'x');
    const io = await init([dir, '--template', 'fancy']);
    expect(io.code).toBe(2);
    expect(io.stderr).toBe('aqven init: unknown template "fancy"; available templates: blank, showcase\n');
  });

  it('refuses a folder that is not empty, exit 2, and leaves it alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aqven-init-'));
    await mkdir(join(dir, 'notes'));
    await writeFile(join(dir, 'README.md'), 'mine');
    const io = await init([dir]);
    expect(io.code).toBe(2);
    expect(io.stderr).toMatch(/is not empty/);
    expect((await readdir(dir)).sort()).toEqual(['README.md', 'notes']);
  });
});

describe('the schema line of every file init writes', () => {
  it('points the YAML language server at the file’s JSON Schema, by a path that resolves from where the file lives', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'aqven-init-'));
    const dir = join(parent, 'deeper', 'bot');
    const r = await initProject(dir, 'showcase');
    expect(r.files.length).toBeGreaterThan(4);
    for (const f of r.files) {
      const text = await readFile(join(dir, f), 'utf8');
      const first = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
      expect(first, f).not.toBeNull();
      const kind = f === 'aqven.yaml' ? 'aqven' : f.split('/')[0]!.slice(0, -1);
      const schema = join(dir, f, '..', first![1]!);
      expect(relative(join(templatesDir(), '..', 'schemas'), schema), f).toBe(`${kind}.schema.json`);
      expect(JSON.parse(await readFile(schema, 'utf8')).title, f).toContain('AQVEN');
      // one line, not two: a template's own line is replaced
      expect(text.match(/yaml-language-server/g), f).toHaveLength(1);
    }
    expect(await checkProject(dir, { env: KEY })).toEqual([]);
  });
});
