// `npm run build:cli` (also run by "prepare" after `npm ci`, and by bin/aqven.mjs when a source is
// newer than the build): lib/cli/main.ts bundled by esbuild into dist/cli/aqven.mjs plus one chunk
// per lazily imported subcommand. npm packages stay external, so better-sqlite3's native binding
// and the rest load from node_modules as they do under tsx.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = join(ROOT, 'dist', 'cli');
export const MANIFEST = join(OUT_DIR, 'manifest.json');

const posix = (p) => p.split(sep).join('/');

/**
 * Each source file keeps its own `import.meta.url` in the bundle (pointing at where it lives in the
 * checkout), so lookups beside it — db/client.ts's ../drizzle, lib/cli/init.ts's ../../templates —
 * resolve exactly as under tsx, whatever the working directory.
 */
const sourceImportMetaUrl = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?tsx?$/ }, (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = posix(relative(OUT_DIR, args.path));
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/**
 * The `@/` alias of tsconfig.json, resolved here rather than by esbuild: with packages external,
 * esbuild leaves an `@/…` path it cannot resolve as a package import, which fails only at run time.
 */
const pathAlias = {
  name: 'path-alias',
  setup(b) {
    b.onResolve({ filter: /^@\// }, async (args) => {
      const r = await b.resolve(`./${args.path.slice(2)}`, { kind: args.kind, importer: args.importer, resolveDir: ROOT });
      return r.errors.length ? { errors: r.errors } : { path: r.path, sideEffects: r.sideEffects };
    });
  },
};

/** Every input of the build, relative to ROOT: what scripts/cli-stale.mjs stats to tell a stale build. */
function inputsOf(metafile) {
  const inputs = new Set(Object.keys(metafile.inputs).map(posix));
  for (const f of ['scripts/build-cli.mjs', 'tsconfig.json', 'package.json']) inputs.add(f);
  return [...inputs].filter((f) => !f.startsWith('node_modules/')).sort();
}

function writeAtomic(path, contents) {
  // a CLI started during a rebuild reads either the old file or the new one, never half of one
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
}

/** Builds the CLI into dist/cli; returns the manifest it wrote. */
export async function buildCli({ logLevel = 'warning' } = {}) {
  const builtAt = Date.now(); // before reading any source: an edit made during the build makes it stale
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { aqven: 'lib/cli/main.ts' },
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true, // a chunk per subcommand, each importing its own npm packages: `aqven --version` loads only commander
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false, // the sources are in the checkout; a smaller map loads faster at start-up
    metafile: true,
    write: false,
    logLevel,
    plugins: [pathAlias, sourceImportMetaUrl],
  });
  mkdirSync(OUT_DIR, { recursive: true });
  const entry = join(OUT_DIR, 'aqven.mjs');
  const files = result.outputFiles.map((f) => f.path);
  // chunks and maps first, the entry last: the entry only ever names chunks already written
  for (const f of result.outputFiles.filter((o) => o.path !== entry)) writeAtomic(f.path, f.contents);
  writeAtomic(entry, result.outputFiles.find((o) => o.path === entry).contents);
  const previous = readManifest();
  const manifest = { builtAt, files: files.map((f) => basename(f)).sort(), inputs: inputsOf(result.metafile) };
  writeAtomic(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  // keep the previous build's chunks: a CLI started just before this build may still import them
  const keep = new Set([...manifest.files, ...(previous?.files ?? []), 'manifest.json']);
  for (const f of readdirSync(OUT_DIR)) if (!keep.has(f) && !f.endsWith('.tmp')) rmSync(join(OUT_DIR, f), { force: true });
  return manifest;
}

/**
 * The typed client (`aqven/client`, docs/client.md): lib/client/index.ts bundled with its one
 * dependency (eventsource-parser) into dist/client/aqven-client.mjs, for Node 20 and browsers. Its
 * types are the source itself (package.json `exports`, condition `types`).
 */
export async function buildClient({ logLevel = 'warning' } = {}) {
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['lib/client/index.ts'],
    outfile: join(ROOT, 'dist', 'client', 'aqven-client.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: ['node20', 'es2022'],
    logLevel,
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = performance.now();
  try {
    const m = await buildCli();
    await buildClient();
    console.log(
      `aqven CLI built: dist/cli/aqven.mjs (${m.files.length} files, ${m.inputs.length} inputs) and dist/client/aqven-client.mjs in ${Math.round(performance.now() - t0)} ms`,
    );
  } catch (err) {
    if (!err?.errors?.length) throw err;
    process.exitCode = 1; // esbuild has printed each error with its source line
  }
}
