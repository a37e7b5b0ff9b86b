#!/usr/bin/env node
// Starts the compiled CLI (dist/cli, built by scripts/build-cli.mjs) in this very process, so SIGINT
// and SIGTERM reach the code doing the work; rebuilds it first when one of its sources is newer.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isCliStale } from '../scripts/cli-stale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (isCliStale(root)) {
  try {
    // esbuild is loaded only here: a fresh build starts without it
    const { buildCli } = await import('../scripts/build-cli.mjs');
    await buildCli({ logLevel: 'error' });
  } catch (err) {
    // esbuild has printed its errors with their source lines; the old build is not run instead
    const errors = /** @type {{ errors?: unknown[] }} */ (err).errors;
    console.error(`aqven: the CLI could not be rebuilt from its sources${errors?.length ? ' (errors above)' : `: ${err}`}; see npm run build:cli`);
    process.exit(70);
  }
}
process.setSourceMapsEnabled(true); // stack traces name lib/**/*.ts lines, not the bundle's
await import(pathToFileURL(join(root, 'dist', 'cli', 'aqven.mjs')).href);
