// The project as files (DESIGN: Storage, "The project in the database"): which files make a
// project, read from a folder into a map path → text, and written back byte for byte. The loader
// lists a project's files here too (load.ts), so a snapshot holds exactly what `aqven check` read.
// Writing never follows a symbolic link and never leaves the folder: a path from the database is
// refused unless it is aqven.yaml or FOLDER/NAME.yaml, before anything is written.
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { Diagnostic } from './diagnostics';
import { formatBytes, LIMITS, quote } from './limits';
import { readProjectText } from './read-text';
import { NAME_PATTERN } from './schema';

/** A project's files: path relative to the project folder ("agents/classifier.yaml") → its text. */
export type ProjectFiles = Record<string, string>;

export const PROJECT_FILE = 'aqven.yaml';
/** the sub-folders whose YAML files belong to a project (one level, no deeper) */
export const PROJECT_FOLDERS = ['providers', 'agents', 'flows'] as const;

/** Files that cannot be read, stored or written as a project; the message says which and why. */
export class ProjectFilesError extends Error {
  constructor(
    message: string,
    /** the positioned problems behind it (a file too big, not UTF-8), when there are some */
    readonly diagnostics: Diagnostic[] = [],
  ) {
    super(message);
    this.name = 'ProjectFilesError';
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The YAML files of a project sub-folder, as paths relative to the project (what the loader reads). */
export async function projectYamlFiles(root: string, sub: string): Promise<string[]> {
  if (!(await isDir(join(root, sub)))) return [];
  const entries = await readdir(join(root, sub), { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => `${sub}/${e.name}`)
    .sort();
}

/**
 * Why `path` cannot be a project file, or null when it can: `aqven.yaml`, or `FOLDER/NAME.yaml`
 * (`.yml`) with FOLDER one of PROJECT_FOLDERS and NAME a name the loader accepts.
 */
export function projectPathProblem(path: string): string | null {
  if (path === PROJECT_FILE) return null;
  if (path.includes('\0')) return 'it contains a NUL character';
  if (isAbsolute(path) || /^(?:[A-Za-z]:|[\\/])/.test(path)) return 'it is an absolute path';
  if (path.split(/[\\/]/).includes('..')) return 'it leaves the project folder (..)';
  const m = /^([^/\\]+)\/([^/\\]+)\.ya?ml$/.exec(path);
  if (!m || !(PROJECT_FOLDERS as readonly string[]).includes(m[1]!) || !NAME_PATTERN.test(m[2]!)) {
    return `it is not a project file (${PROJECT_FILE}, ${PROJECT_FOLDERS.map((f) => `${f}/NAME.yaml`).join(', ')})`;
  }
  return null;
}

/**
 * `files` as a project's files, keys sorted — or a ProjectFilesError naming the first path that
 * is not a project file (absolute, `..`, anything but aqven.yaml and FOLDER/NAME.yaml), a value
 * that is not text, or a file over LIMITS.fileBytes. `origin` names where they came from.
 */
export function checkProjectFiles(files: unknown, origin: string): ProjectFiles {
  if (typeof files !== 'object' || files === null || Array.isArray(files)) throw new ProjectFilesError(`${origin} is not a map of file paths to texts`);
  const out: [string, string][] = [];
  for (const [path, text] of Object.entries(files)) {
    const problem = projectPathProblem(path);
    if (problem) throw new ProjectFilesError(`refusing the file "${quote(path)}" of ${origin}: ${problem}`);
    if (typeof text !== 'string') throw new ProjectFilesError(`the file ${path} of ${origin} is not text`);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > LIMITS.fileBytes)
      throw new ProjectFilesError(`the file ${path} of ${origin} is ${bytes} bytes; a project file may be at most ${LIMITS.fileBytes} bytes (${formatBytes(LIMITS.fileBytes)})`);
    out.push([path, text]);
  }
  return Object.fromEntries(out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** sha256 (hex) over the sorted paths and their texts: equal files, equal hash. */
export function projectFilesHash(files: ProjectFiles): string {
  const entries = Object.keys(files)
    .sort()
    .map((p) => [p, files[p]]);
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}

/** The paths of the project files in the folder `root`: aqven.yaml (listed even when missing), then each sub-folder's YAML files, without dotfiles. */
async function projectFilePaths(root: string): Promise<string[]> {
  const paths = [PROJECT_FILE];
  for (const sub of PROJECT_FOLDERS) paths.push(...(await projectYamlFiles(root, sub)).filter((p) => !basename(p).startsWith('.')));
  return paths;
}

/**
 * The files of the project folder `dir`: aqven.yaml and the YAML files of providers/, agents/ and
 * flows/ — what the loader reads — without dotfiles. Anything else of the folder (its database,
 * node_modules, notes) is not part of the project. Each file is held to the loader's limits (at
 * most LIMITS.fileBytes, UTF-8): a ProjectFilesError carries their diagnostics.
 */
export async function readProjectFiles(dir: string): Promise<ProjectFiles> {
  const root = resolve(dir);
  const paths = await projectFilePaths(root);
  const files: ProjectFiles = {};
  const problems: Diagnostic[] = [];
  for (const path of paths) {
    let text: string | Diagnostic;
    try {
      text = await readProjectText(root, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      if (path === PROJECT_FILE) throw new ProjectFilesError(`no ${PROJECT_FILE} in ${root}: not a project folder`);
      continue; // removed since it was listed
    }
    if (typeof text === 'string') files[path] = text;
    else problems.push(text);
  }
  if (problems.length) {
    const d = problems[0]!;
    throw new ProjectFilesError(`${problems.length} file(s) of ${root} cannot be stored, e.g. ${d.file}: ${d.message}`, problems);
  }
  return checkProjectFiles(files, root);
}

/**
 * A cheap look at a project folder (DESIGN: Storage, "The project folder in a long-lived
 * process"): the files readProjectFiles would read, each with its size, modification and change
 * times (ns) and inode, stat'ed but not read. Equal keys mean unchanged files — once the stats are
 * older than a file system's timestamp step: see folderUnchanged.
 */
export interface FolderFingerprint {
  key: string;
  /** the newest modification time among the files, ms since epoch (0 without files) */
  newestMtimeMs: number;
  /** when the files were stat'ed, ms since epoch */
  takenAt: number;
}

/**
 * The coarsest timestamp step of the file systems a project may live on (FAT's 2 s; ext4 and APFS
 * keep nanoseconds, HFS+ seconds): a file written within this of a fingerprint may be written
 * again with the same size and times.
 */
export const MTIME_STEP_MS = 2_000;

export async function projectFolderFingerprint(dir: string, now: () => number = Date.now): Promise<FolderFingerprint> {
  const root = resolve(dir);
  const takenAt = now();
  const parts: string[] = [];
  let newest = 0;
  for (const path of await projectFilePaths(root)) {
    try {
      const info = await stat(join(root, path), { bigint: true });
      parts.push(`${path}\t${info.size}\t${info.mtimeNs}\t${info.ctimeNs}\t${info.ino}`);
      newest = Math.max(newest, Number(info.mtimeMs));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOTDIR: the "folder" is a file; what loads it then says there is no aqven.yaml
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      parts.push(`${path}\t-`); // aqven.yaml missing, or a file removed since it was listed
    }
  }
  return { key: parts.join('\n'), newestMtimeMs: newest, takenAt };
}

/**
 * Whether the folder is as it was at `before` (its files were not read again): the same stats, and
 * `before` taken more than MTIME_STEP_MS after its newest file was written — else a write within
 * the same timestamp step could leave the stats as they were, and the files must be read (as
 * git's "racily clean" entries are).
 */
export function folderUnchanged(before: FolderFingerprint, now: FolderFingerprint): boolean {
  return before.key === now.key && before.newestMtimeMs + MTIME_STEP_MS < before.takenAt;
}

export interface WriteResult {
  /** files written (new, or overwritten with `force`) */
  written: string[];
  /** files already there with the same bytes */
  unchanged: string[];
  /** files there with other bytes: left alone unless `force` (then also in `written`) */
  differing: string[];
}

export interface WriteOptions {
  /** overwrite files whose bytes differ (never a link, never a folder) */
  force?: boolean;
  /** where the files come from, in messages (default "the snapshot") */
  origin?: string;
  /** mode of the files and folders this creates (default: 0666 / 0777 less the umask) */
  fileMode?: number;
  dirMode?: number;
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Refuses a path that is a link or not what is expected there. */
function refuseOddEntry(path: string, info: Awaited<ReturnType<typeof lstat>>, want: 'file' | 'folder'): void {
  if (info.isSymbolicLink()) throw new ProjectFilesError(`${path} is a symbolic link: aqven does not write through links; remove it first`);
  if (want === 'folder' ? !info.isDirectory() : !info.isFile()) throw new ProjectFilesError(`${path} is not a ${want}; remove or rename it first`);
}

/** Writes `bytes` to `path` in one step (a reader never sees half of it), replacing the entry itself, never following a link. */
async function writeAtomically(path: string, bytes: Buffer, mode: number | undefined): Promise<void> {
  const tmp = join(path, '..', `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, mode ?? 0o666);
  try {
    await fh.writeFile(bytes);
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Writes `files` into the folder `dir` (created if missing) byte for byte. Every path is checked
 * first (checkProjectFiles): one that is absolute, leaves the folder or is not a project file
 * refuses the whole write. A sub-folder or file that is a symbolic link, or not a folder / file,
 * is refused too. When some existing file differs and `force` is not set, nothing is written and
 * the differing files are listed. Nothing is ever deleted.
 */
export async function writeProjectFiles(dir: string, files: unknown, opts: WriteOptions = {}): Promise<WriteResult> {
  const checked = checkProjectFiles(files, opts.origin ?? 'the snapshot');
  const root = resolve(dir);
  await mkdir(root, { recursive: true, ...(opts.dirMode !== undefined && { mode: opts.dirMode }) });
  const result: WriteResult = { written: [], unchanged: [], differing: [] };
  const toWrite: string[] = [];
  const folders = new Set<string>();
  for (const [path, text] of Object.entries(checked)) {
    const folder = path.includes('/') ? path.slice(0, path.indexOf('/')) : null;
    if (folder !== null && !folders.has(folder)) {
      const info = await lstatOrNull(join(root, folder));
      if (info) refuseOddEntry(join(root, folder), info, 'folder');
      folders.add(folder);
    }
    const target = join(root, path);
    const info = await lstatOrNull(target);
    if (!info) {
      toWrite.push(path);
      continue;
    }
    refuseOddEntry(target, info, 'file');
    const same = (await readFile(target)).equals(Buffer.from(text, 'utf8'));
    if (same) result.unchanged.push(path);
    else {
      result.differing.push(path);
      toWrite.push(path);
    }
  }
  if (result.differing.length && !opts.force) return result;
  for (const folder of folders) {
    try {
      await mkdir(join(root, folder), opts.dirMode !== undefined ? { mode: opts.dirMode } : {});
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    refuseOddEntry(join(root, folder), await lstat(join(root, folder)), 'folder'); // made a link meanwhile
  }
  for (const path of toWrite) {
    await writeAtomically(join(root, path), Buffer.from(checked[path]!, 'utf8'), opts.fileMode);
    result.written.push(path);
  }
  return result;
}

/** The default home of materialized snapshots: private to this user, one per user on the machine. */
export function snapshotCacheDir(): string {
  return join(tmpdir(), `aqven-snapshots-${process.getuid?.() ?? userInfo().username}`);
}

/** Creates `dir` 0700 if missing and refuses it unless it is a real folder of this user that nobody else may read. */
async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  const uid = process.getuid?.();
  const mine = uid === undefined || info.uid === uid;
  const closed = process.platform === 'win32' || (info.mode & 0o077) === 0;
  if (info.isSymbolicLink() || !info.isDirectory() || !mine || !closed) {
    throw new ProjectFilesError(`refusing the snapshot cache ${dir}: it is not a folder of this user closed to others (0700); remove it and try again`);
  }
}

/** Whether `dir` holds exactly the files of `hash`. */
async function intact(dir: string, hash: string): Promise<boolean> {
  try {
    return projectFilesHash(await readProjectFiles(dir)) === hash;
  } catch {
    return false;
  }
}

/**
 * Writes `files` (a snapshot) into a private folder named by their hash — `cacheDir/HASH/project`,
 * cacheDir 0700 and this user's, files 0600 — and returns it; a folder already there with the same
 * files is used as it is. The folder appears whole or not at all (written aside, then renamed), so
 * processes materializing the same snapshot at once never see half of it.
 */
export async function materializeProject(files: unknown, opts: { cacheDir?: string; origin?: string } = {}): Promise<{ dir: string; hash: string }> {
  const checked = checkProjectFiles(files, opts.origin ?? 'the snapshot');
  const hash = projectFilesHash(checked);
  const base = opts.cacheDir ?? snapshotCacheDir();
  await ensurePrivateDir(base);
  const home = join(base, hash);
  const dir = join(home, 'project');
  if (await intact(dir, hash)) return { dir, hash };
  await rm(home, { recursive: true, force: true }); // a damaged copy
  const aside = join(base, `.${hash}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  await mkdir(aside, { mode: 0o700 });
  try {
    await writeProjectFiles(join(aside, 'project'), checked, { fileMode: 0o600, dirMode: 0o700 });
    await rename(aside, home);
  } catch (err) {
    await rm(aside, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    // another process renamed its copy first
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await intact(dir, hash))) return { dir, hash };
    throw err;
  }
  return { dir, hash };
}
