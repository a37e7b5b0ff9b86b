// contender.ts bundled by esbuild into one file, as the CLI ships (scripts/build-cli.mjs): a
// contender process then starts in a fraction of tsx's time, which would otherwise be paid 40 times
// a run. npm packages stay external and load from node_modules, the peers exactly as installed.
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
/** the checkout (a bundled copy of this file finds it through AQVEN_ROOT, as the contenders do) */
export const ROOT = process.env.AQVEN_ROOT ?? join(here, '..', '..');

/** tsconfig's `@/` alias, resolved by hand: with packages external esbuild would leave it as a package import. */
const pathAlias: Plugin = {
  name: 'path-alias',
  setup(b) {
    b.onResolve({ filter: /^@\// }, async (args) => {
      const r = await b.resolve(`./${args.path.slice(2)}`, { kind: args.kind, importer: args.importer, resolveDir: ROOT });
      return r.errors.length ? { errors: r.errors } : { path: r.path, sideEffects: r.sideEffects };
    });
  },
};

/**
 * The bench's own seam into the run store, in the contender bundle only: `seedRunStore(db, store)`
 * makes `store` the one runStore(db) returns, so the `aqven-writer-thread` contender runs the
 * engine over bench/writer-thread-store.ts's store. The product has no such seam.
 */
const seedRunStore: Plugin = {
  name: 'seed-run-store',
  setup(b) {
    b.onLoad({ filter: /[\\/]db[\\/]run-store\.ts$/ }, (args) => ({
      contents: `${readFileSync(args.path, 'utf8')}\nexport function seedRunStore(db: Db, store: RunStore) { cache.set(db, store); }\n`,
      loader: 'ts',
      resolveDir: dirname(args.path),
    }));
  },
};

/** Builds the contender bundle under node_modules/.cache (so its packages resolve) and returns its path. */
export function bundleContender(): Promise<string> {
  return bundleEntry(join(here, 'contender.ts'), 'aqven-bench-peers', [seedRunStore]);
}

/** Bundles `entry` as bundleContender does, into node_modules/.cache/`folder`/, and returns the bundle's path. */
export async function bundleEntry(entry: string, folder: string, plugins: Plugin[] = []): Promise<string> {
  const outfile = join(ROOT, 'node_modules', '.cache', folder, `${basename(entry, '.ts')}.mjs`);
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [pathAlias, ...plugins],
    logLevel: 'error',
  });
  return outfile;
}
