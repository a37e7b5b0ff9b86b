// The project as files: what a folder holds of a project, written back byte for byte, never
// through a link or outside the folder; snapshots materialized into a private cache folder.
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeProject } from '@/test/helpers/fixture-project';
import { LIMITS } from './limits';
import { loadProject } from './load';
import {
  checkProjectFiles,
  folderUnchanged,
  materializeProject,
  MTIME_STEP_MS,
  projectFilesHash,
  projectFolderFingerprint,
  ProjectFilesError,
  projectPathProblem,
  readProjectFiles,
  writeProjectFiles,
} from './project-files';

const temp = () => mkdtemp(join(tmpdir(), 'aqven-files-'));

/** an agent whose text has CRLF line ends, a BOM, non-ASCII text and no final newline */
const ODD_AGENT = '\uFEFFapiVersion: "aqven/v1"\r\nkind: "Agent"\r\ndescription: "Réponses — 日本語 🚀"\r\nmodel: "openrouter:openai/gpt-oss-20b"';

describe('readProjectFiles', () => {
  it('reads aqven.yaml and the YAML of providers/, agents/, flows/, nothing else', async () => {
    const dir = await writeProject({
      'agents/odd.yaml': ODD_AGENT,
      'agents/.draft.yaml': 'a dotfile',
      'agents/notes.txt': 'not YAML',
      'agents/deeper/x.yaml': 'one level only',
      'node_modules/pkg/index.yaml': 'x',
      '.aqven/aqven.db': 'the database',
      'README.yaml': 'not a project file',
    });
    const files = await readProjectFiles(dir);
    expect(Object.keys(files)).toEqual(['agents/helper.yaml', 'agents/odd.yaml', 'aqven.yaml', 'flows/ask.yaml']);
    expect(files['agents/odd.yaml']).toBe(ODD_AGENT);
  });

  it('refuses a folder without aqven.yaml, a file past the size limit and a file that is not UTF-8', async () => {
    await expect(readProjectFiles(await writeProject({ 'aqven.yaml': null }))).rejects.toThrow(/no aqven\.yaml in .*: not a project folder/);
    const big = await writeProject({ 'flows/big.yaml': `# ${'x'.repeat(LIMITS.fileBytes)}\n` });
    await expect(readProjectFiles(big)).rejects.toMatchObject({ name: 'ProjectFilesError', diagnostics: [{ file: 'flows/big.yaml', code: 'E_LIMIT' }] });
    const latin1 = await writeProject();
    await writeFile(join(latin1, 'agents/helper.yaml'), Buffer.from('description: "caf\xe9"\n', 'latin1'));
    await expect(readProjectFiles(latin1)).rejects.toThrow(/agents\/helper\.yaml: the file is not UTF-8/);
  });
});

describe('projectPathProblem and checkProjectFiles', () => {
  it('accepts aqven.yaml and FOLDER/NAME.yaml only', () => {
    for (const ok of ['aqven.yaml', 'agents/a.yaml', 'flows/triage-2.yml', 'providers/open_router.yaml']) expect(projectPathProblem(ok)).toBeNull();
    expect(projectPathProblem('../aqven.yaml')).toMatch(/leaves the project folder/);
    expect(projectPathProblem('agents/../../x.yaml')).toMatch(/leaves the project folder/);
    expect(projectPathProblem('/etc/passwd')).toMatch(/absolute/);
    expect(projectPathProblem('C:\\x.yaml')).toMatch(/absolute/);
    expect(projectPathProblem('agents\\..\\x.yaml')).toMatch(/leaves/);
    expect(projectPathProblem('agents/a.yaml\0')).toMatch(/NUL/);
    for (const odd of ['agents/.a.yaml', 'agents/a/b.yaml', 'lib/a.yaml', 'agents/a.json', 'aqven.yml', '']) expect(projectPathProblem(odd)).toMatch(/not a project file/);
  });

  it('sorts the paths and refuses texts that are not strings or too big', () => {
    expect(Object.keys(checkProjectFiles({ 'flows/b.yaml': 'b', 'aqven.yaml': 'p', 'agents/a.yaml': 'a' }, 'x'))).toEqual(['agents/a.yaml', 'aqven.yaml', 'flows/b.yaml']);
    expect(() => checkProjectFiles({ 'aqven.yaml': 7 }, 'snapshot 3')).toThrow('the file aqven.yaml of snapshot 3 is not text');
    expect(() => checkProjectFiles({ 'aqven.yaml': 'é'.repeat(LIMITS.fileBytes / 2 + 1) }, 'snapshot 3')).toThrow(
      'the file aqven.yaml of snapshot 3 is 131074 bytes; a project file may be at most 131072 bytes (128 KiB)',
    );
    expect(() => checkProjectFiles(['aqven.yaml'], 'snapshot 3')).toThrow('snapshot 3 is not a map of file paths to texts');
  });

  it('hashes the sorted paths and texts: the order of the keys does not matter, a byte does', () => {
    const a = projectFilesHash({ 'aqven.yaml': 'p', 'agents/a.yaml': 'a' });
    expect(projectFilesHash({ 'agents/a.yaml': 'a', 'aqven.yaml': 'p' })).toBe(a);
    expect(projectFilesHash({ 'agents/a.yaml': 'a\r\n', 'aqven.yaml': 'p' })).not.toBe(a);
    // no two maps share an encoding: a path's end cannot pass for a text's start
    expect(projectFilesHash({ 'agents/ab.yaml': '', 'aqven.yaml': 'p' })).not.toBe(projectFilesHash({ 'agents/a.yaml': 'b.yaml', 'aqven.yaml': 'p' }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('writeProjectFiles', () => {
  it('writes the files byte for byte, and the folder reads back the same map', async () => {
    const files = await readProjectFiles(await writeProject({ 'agents/odd.yaml': ODD_AGENT }));
    const out = join(await temp(), 'new', 'project');
    const r = await writeProjectFiles(out, files);
    expect(r).toEqual({ written: Object.keys(files), unchanged: [], differing: [] });
    expect(await readFile(join(out, 'agents/odd.yaml'))).toEqual(Buffer.from(ODD_AGENT, 'utf8'));
    expect(await readProjectFiles(out)).toEqual(files);
    expect(await writeProjectFiles(out, files)).toEqual({ written: [], unchanged: Object.keys(files), differing: [] });
  });

  it('leaves differing files alone without force, overwrites them with it, and never deletes', async () => {
    const out = await writeProject({ 'agents/extra.yaml': 'mine' });
    const before = await readFile(join(out, 'agents/helper.yaml'), 'utf8');
    const files = { 'aqven.yaml': await readFile(join(out, 'aqven.yaml'), 'utf8'), 'agents/helper.yaml': `${before}# edited\n`, 'flows/new.yaml': 'n' };
    const refused = await writeProjectFiles(out, files);
    expect(refused).toEqual({ written: [], unchanged: ['aqven.yaml'], differing: ['agents/helper.yaml'] });
    expect(existsSync(join(out, 'flows/new.yaml'))).toBe(false); // nothing at all was written
    expect(await readFile(join(out, 'agents/helper.yaml'), 'utf8')).toBe(before);
    const forced = await writeProjectFiles(out, files, { force: true });
    expect(forced.written.sort()).toEqual(['agents/helper.yaml', 'flows/new.yaml']);
    expect(await readFile(join(out, 'agents/helper.yaml'), 'utf8')).toBe(`${before}# edited\n`);
    expect(await readFile(join(out, 'agents/extra.yaml'), 'utf8')).toBe('mine');
    expect((await readdir(join(out, 'agents'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a path that leaves the folder before writing anything', async () => {
    const root = await temp();
    const out = join(root, 'project');
    for (const evil of ['../evil.yaml', 'agents/../../evil.yaml', join(root, 'evil.yaml')]) {
      await expect(writeProjectFiles(out, { 'aqven.yaml': 'p', [evil]: 'x' }, { origin: 'snapshot 9' })).rejects.toThrow(
        /refusing the file ".*" of snapshot 9: it (leaves the project folder|is an absolute path)/,
      );
    }
    expect(await readdir(root)).toEqual([]);
  });

  it('never writes through a symbolic link, even with force', async () => {
    const outside = await temp();
    const out = await temp();
    await symlink(outside, join(out, 'agents'));
    await expect(writeProjectFiles(out, { 'agents/a.yaml': 'x' }, { force: true })).rejects.toThrow(/agents is a symbolic link: aqven does not write through links/);
    const out2 = await temp();
    await mkdir(join(out2, 'flows'));
    await writeFile(join(outside, 'target.yaml'), 'precious');
    await symlink(join(outside, 'target.yaml'), join(out2, 'flows/f.yaml'));
    await expect(writeProjectFiles(out2, { 'flows/f.yaml': 'x' }, { force: true })).rejects.toThrow(/flows\/f\.yaml is a symbolic link/);
    expect(await readFile(join(outside, 'target.yaml'), 'utf8')).toBe('precious');
    expect(await readdir(outside)).toEqual(['target.yaml']);
  });
});

describe('materializeProject', () => {
  it('writes a snapshot into a private folder named by its hash, once, and the loader reads it', async () => {
    const files = await readProjectFiles(await writeProject({ 'agents/odd.yaml': ODD_AGENT }));
    const cacheDir = join(await temp(), 'cache');
    const m = await materializeProject(files, { cacheDir });
    expect(m.hash).toBe(projectFilesHash(files));
    expect(m.dir).toBe(join(cacheDir, m.hash, 'project'));
    expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(m.dir, 'agents/odd.yaml'))).mode & 0o777).toBe(0o600);
    expect(await readProjectFiles(m.dir)).toEqual(files);
    const { project } = await loadProject(m.dir, { env: {} });
    expect(Object.keys(project!.agents).sort()).toEqual(['helper', 'odd']);
    const written = (await stat(join(m.dir, 'aqven.yaml'))).mtimeMs;
    expect(await materializeProject(files, { cacheDir })).toEqual(m); // reused as it is
    expect((await stat(join(m.dir, 'aqven.yaml'))).mtimeMs).toBe(written);
    expect((await readdir(cacheDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('rewrites a damaged copy, and materializes at once from several callers', async () => {
    const files = await readProjectFiles(await writeProject());
    const cacheDir = join(await temp(), 'cache');
    const all = await Promise.all(Array.from({ length: 4 }, () => materializeProject(files, { cacheDir })));
    expect(new Set(all.map((m) => m.dir)).size).toBe(1);
    const m = all[0]!;
    await writeFile(join(m.dir, 'agents/helper.yaml'), 'tampered');
    await materializeProject(files, { cacheDir });
    expect(await readProjectFiles(m.dir)).toEqual(files);
  });

  it('refuses a cache folder others may enter, or a link', async () => {
    const files = await readProjectFiles(await writeProject());
    const open = join(await temp(), 'cache');
    await mkdir(open);
    await chmod(open, 0o755);
    await expect(materializeProject(files, { cacheDir: open })).rejects.toThrow(ProjectFilesError);
    const link = join(await temp(), 'cache');
    await symlink(await temp(), link);
    await expect(materializeProject(files, { cacheDir: link })).rejects.toThrow(/refusing the snapshot cache .*: it is not a folder of this user closed to others/);
  });
});

describe('projectFolderFingerprint and folderUnchanged', () => {
  const old = () => Date.now() / 1000 - 3600;

  it('looks at exactly the files readProjectFiles reads, and changes with each of them, never with anything else', async () => {
    const dir = await writeProject({ 'agents/.draft.yaml': 'a dotfile', 'agents/notes.txt': 'notes' });
    const first = await projectFolderFingerprint(dir);
    expect(first.key.split('\n').map((l) => l.split('\t')[0])).toEqual(['aqven.yaml', 'agents/helper.yaml', 'flows/ask.yaml']);
    expect((await projectFolderFingerprint(dir)).key).toBe(first.key);
    await writeFile(join(dir, 'agents/notes.txt'), 'other notes');
    await mkdir(join(dir, '.aqven'), { recursive: true });
    await writeFile(join(dir, '.aqven/aqven.db'), 'the database');
    expect((await projectFolderFingerprint(dir)).key).toBe(first.key);
    await writeFile(join(dir, 'agents/second.yaml'), 'x');
    const added = await projectFolderFingerprint(dir);
    expect(added.key).not.toBe(first.key);
    await writeFile(join(dir, 'agents/second.yaml'), 'y'); // same size, written again
    expect((await projectFolderFingerprint(dir)).key).not.toBe(added.key);
    const bare = await writeProject({ 'aqven.yaml': null });
    expect((await projectFolderFingerprint(bare)).key).toMatch(/^aqven\.yaml\t-\n/);
  });

  it('trusts equal stats only when they were taken more than the timestamp step after the newest write', async () => {
    const dir = await writeProject();
    for (const f of ['aqven.yaml', 'agents/helper.yaml', 'flows/ask.yaml']) await utimes(join(dir, f), old(), old());
    const settled = await projectFolderFingerprint(dir);
    expect(folderUnchanged(settled, await projectFolderFingerprint(dir))).toBe(true);
    // a file written just now: a second write within its timestamp step could leave every stat equal
    await writeFile(join(dir, 'agents/helper.yaml'), (await readFile(join(dir, 'agents/helper.yaml'), 'utf8')) + '# x\n');
    const fresh = await projectFolderFingerprint(dir);
    expect(folderUnchanged(settled, fresh)).toBe(false);
    expect(folderUnchanged(fresh, await projectFolderFingerprint(dir))).toBe(false);
    // the same stats looked at later than the step: trusted
    const later = await projectFolderFingerprint(dir, () => Date.now() + MTIME_STEP_MS + 1);
    expect(later.key).toBe(fresh.key);
    expect(folderUnchanged(later, await projectFolderFingerprint(dir))).toBe(true);
  });
});
