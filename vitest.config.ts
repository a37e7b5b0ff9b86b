import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Three projects; a test file's place says which it belongs to (DESIGN: Tests):
//   unit         lib/**/*.test.ts — pure: no child process, no database (neither a SQLite file nor
//                PostgreSQL), no network but an in-process simulator on loopback, time injected.
//                A test of lib/ that needs more lives in test/<area>/ instead.
//   integration  db/**/*.test.ts and test/**/*.test.ts — databases (SQLite files, the throwaway
//                PostgreSQL cluster), the simulator, the real CLI and its processes.
//   load         **/*.load.test.ts — the [big] tests (hundreds of runs, clusters of processes):
//                `npm run test:load`, not part of `npm test`.
// `npm run test:unit` (what `npm test` runs) is unit + integration.
const LOAD = '**/*.load.test.ts';
const alias = { '@': fileURLToPath(new URL('.', import.meta.url)) };
const shared = { environment: 'node' as const, testTimeout: 20_000, pool: 'forks' as const };

export default defineConfig({
  resolve: { alias },
  test: {
    // the run's own temporary folder (TMPDIR), removed when the run ends; the root's setup runs
    // before every project's and is torn down first
    globalSetup: ['test/helpers/tmp-global-setup.ts'],
    projects: [
      {
        resolve: { alias },
        test: { ...shared, name: 'unit', include: ['lib/**/*.test.ts'], exclude: [LOAD] },
      },
      {
        resolve: { alias },
        // the PostgreSQL cluster and its migrated template database, once per run (its socket and data in the system's temporary folder)
        test: { ...shared, name: 'integration', include: ['db/**/*.test.ts', 'test/**/*.test.ts'], exclude: [LOAD], globalSetup: ['test/helpers/pg-global-setup.ts'] },
      },
      {
        resolve: { alias },
        test: { ...shared, name: 'load', include: [LOAD], globalSetup: ['test/helpers/pg-global-setup.ts'] },
      },
    ],
  },
});
