import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Four projects; a test file's place says which it belongs to (DESIGN: Tests):
//   unit         lib/**/*.test.ts — pure: no child process, no database (neither a SQLite file nor
//                PostgreSQL), no network but an in-process simulator on loopback, time injected.
//                A test of lib/ that needs more lives in test/<area>/ instead.
//   integration  db/**/*.test.ts and test/**/*.test.ts — databases (SQLite files, the throwaway
//                PostgreSQL cluster), the simulator, the real CLI and its processes; its files share
//                a process per worker, and what one leaves in it is undone when it ends.
//   integration-isolated  the few integration files that need a process of their own (OWN_PROCESS).
//   load         **/*.load.test.ts — the [big] tests (hundreds of runs, clusters of processes):
//                `npm run test:load`, not part of `npm test`.
// `npm run test:unit` (what `npm test` runs) is unit, then both integration projects at once
// (sequence.groupOrder).
const LOAD = '**/*.load.test.ts';
const alias = { '@': fileURLToPath(new URL('.', import.meta.url)) };
// files of the integration project at once (vitest's default on 2 cores is 1): their time is mostly
// waiting on processes, databases and sockets; with 3, vitest left most of a core idle (unit and
// integration 244 s, 4 at once 219 s, measured 2026-12-03 beside the e2e build)
const INTEGRATION_WORKERS = 4;
// integration files that need a process of their own (integration-isolated): each replaces one of
// our own modules (vi.mock), which in a shared process would stay replaced for the files after it
const OWN_PROCESS = [
  // lib/server/access's peerAddress and lib/server/auth's authFor, to name the address and count password checks
  'test/api/sign-in-action.test.ts',
];
const shared = { environment: 'node' as const, testTimeout: 20_000, pool: 'forks' as const };
// an integration test waits on processes, databases and sockets: its timeout only catches a hang, at
// 3x its quiet time or more on a busy machine (the slowest quiet ones, 10-17 s, set their own above it)
const INTEGRATION_TIMEOUTS = { testTimeout: 60_000, hookTimeout: 60_000 };

export default defineConfig({
  resolve: { alias },
  test: {
    // the run's own temporary folder (TMPDIR), removed when the run ends; the root's setup runs
    // before every project's and is torn down first
    globalSetup: ['test/helpers/tmp-global-setup.ts'],
    projects: [
      {
        resolve: { alias },
        // one process for every file, its modules loaded once (isolate: false; most of a file's time
        // was loading them again): 275 s -> 91 s wall, 101 s -> 33 s of CPU on this 2-core machine
        // under a load of 12. Its tests share no state: green twice in shuffled orders
        // (--sequence.shuffle). Forks, not threads: a worker thread's larger stack changes what
        // overflows the YAML parser (lib/project/parser-recursion.test.ts). Runs before integration.
        test: { ...shared, name: 'unit', include: ['lib/**/*.test.ts'], exclude: [LOAD], isolate: false, maxWorkers: 1, sequence: { groupOrder: 0 } },
      },
      {
        resolve: { alias },
        // the PostgreSQL cluster and its migrated template database, once per run (its socket and data in the system's temporary folder)
        test: {
          ...shared,
          name: 'integration',
          include: ['db/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [LOAD, ...OWN_PROCESS],
          globalSetup: ['test/helpers/pg-global-setup.ts'],
          // files share a process per worker, their modules loaded once (isolate: false); what a
          // file leaves in the process is put back when it ends (shared-process-setup.ts)
          // (the two files that failed here at load 18 were races in any process, fixed: pg-migrations'
          // pooled connection released before it ended, the usage lookup's real-time readiness)
          isolate: false,
          setupFiles: ['test/helpers/next-stand-ins.ts', 'test/helpers/shared-process-setup.ts'],
          ...INTEGRATION_TIMEOUTS,
          maxWorkers: INTEGRATION_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        resolve: { alias },
        test: {
          ...shared,
          name: 'integration-isolated',
          include: OWN_PROCESS,
          globalSetup: ['test/helpers/pg-global-setup.ts'],
          setupFiles: ['test/helpers/next-stand-ins.ts'],
          ...INTEGRATION_TIMEOUTS,
          maxWorkers: INTEGRATION_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        resolve: { alias },
        test: { ...shared, name: 'load', include: [LOAD], globalSetup: ['test/helpers/pg-global-setup.ts'], sequence: { groupOrder: 2 } },
      },
    ],
  },
});
