import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { E2E_PORT, E2E_WORKERS, e2eProjectDir, editorState, portOf } from './e2e/project-dir';

// Each worker has a dashboard of its own (e2e/project-dir.ts): this file is read again in every
// worker, where E2E_PORT and editorState() name that worker's server.
const servers = Array.from({ length: E2E_WORKERS }, (_, server) => server);
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';

export default defineConfig({
  testDir: './e2e',
  // a test shares its server with the tests before it on the same worker only, never with one running at once
  fullyParallel: true,
  workers: E2E_WORKERS,
  retries: 0,
  // a slow spec takes 30–40 s with the machine's other work beside it (a spec that waits longer sets its own)
  timeout: 120_000,
  // a page's first answer (a route's modules loaded, a password hashed) takes seconds on a busy 2-core machine
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${E2E_PORT}`,
    // a trace is recorded for every test to keep a failing one's: in CI nobody can open it, so none is
    // recorded there (E2E_TRACE=retain-on-failure asks for them anyway)
    trace: (process.env.E2E_TRACE as 'off' | 'retain-on-failure' | undefined) ?? (process.env.CI ? 'off' : 'retain-on-failure'),
    launchOptions: {
      // Debian's headless shell (package chromium-headless-shell), the build Playwright itself runs
      // headless: the same Blink without the full browser's UI layers. A new context with a page
      // loaded costs a third of the full browser's CPU (0.73 against 2.26 CPU s), and 19 specs took
      // 62 CPU s of it against 136 (measured 2026-12-03); a browser test is CPU-bound on this 2-core
      // machine. Debian's full chromium where the shell is not installed. The compositor runs in the
      // browser process instead of a GPU process of its own, no software rasterizer, no process per site.
      executablePath: process.env.CHROMIUM_PATH ?? (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium'),
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--in-process-gpu',
        '--disable-software-rasterizer',
        '--disable-site-isolation-trials',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
        '--no-first-run',
      ],
    },
  },
  projects: [
    { name: 'accounts', testMatch: /auth\.setup\.ts$/ },
    // every spec starts signed in as the editor; a spec about access signs in (or out) itself
    { name: 'dashboard', dependencies: ['accounts'], use: { storageState: editorState() } },
  ],
  // started one after another: the first builds the dashboard when its sources changed (serve.mjs),
  // the others find the build made
  webServer: servers.map((server) => ({
    command: `node e2e/serve.mjs ${portOf(server)} ${e2eProjectDir(server)}`,
    url: `http://127.0.0.1:${portOf(server)}/runs`,
    // the first may build first: about 1.5 min on a quiet machine, over 4 on a busy one
    timeout: server === 0 ? 600_000 : 240_000,
    reuseExistingServer: false,
    stdout: 'pipe' as const,
    stderr: 'pipe' as const,
  })),
});
