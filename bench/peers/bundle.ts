// contender.ts bundled by esbuild into one file, as the CLI ships (scripts/build-cli.mjs): a
// contender process then starts in a fraction of tsx's time, which would otherwise be paid 40 times
// a run. npm packages stay external and load from node_modules, the peers exactly as installed.
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(here, '..', '..');

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

/** Builds the contender bundle under node_modules/.cache (so its packages resolve) and returns its path. */
export function bundleContender(): Promise<string> {
  return bundleEntry(join(here, 'contender.ts'), 'aqven-bench-peers');
}

/** Bundles `entry` as bundleContender does, into node_modules/.cache/`folder`/, and returns the bundle's path. */
export async function bundleEntry(entry: string, folder: string): Promise<string> {
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
    plugins: [pathAlias],
    logLevel: 'error',
  });
  return outfile;
}
