import { defineConfig } from '@playwright/test';
import { EDITOR_STATE } from './e2e/accounts';
import { E2E_PORT, e2eProjectDir } from './e2e/project-dir';

const port = E2E_PORT;

export default defineConfig({
  testDir: './e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
    },
  },
  projects: [
    { name: 'accounts', testMatch: /auth\.setup\.ts$/ },
    // every spec starts signed in as the editor; a spec about access signs in (or out) itself
    { name: 'dashboard', dependencies: ['accounts'], use: { storageState: EDITOR_STATE } },
  ],
  webServer: {
    command: `node e2e/serve.mjs ${port} ${e2eProjectDir()}`,
    url: `http://127.0.0.1:${port}/runs`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
