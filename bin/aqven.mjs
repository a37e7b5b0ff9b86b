#!/usr/bin/env node
// Launches the TypeScript CLI through tsx so `npx aqven …` works without a build step.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsxCli = require.resolve('tsx/cli');
const res = spawnSync(process.execPath, [tsxCli, join(root, 'lib/cli/main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(res.status ?? 1);
