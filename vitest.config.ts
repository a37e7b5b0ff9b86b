import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('.', import.meta.url)) } },
  test: {
    include: ['lib/**/*.test.ts', 'db/**/*.test.ts', 'test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
    pool: 'forks',
    // the PostgreSQL cluster first (its socket and data stay in the system's temporary folder),
    // then the run's own temporary folder, removed when the run ends
    globalSetup: ['test/helpers/pg-global-setup.ts', 'test/helpers/tmp-global-setup.ts'],
  },
});
