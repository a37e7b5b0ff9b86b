// Where the e2e server's copy of the showcase project lives, so a spec can read the files the
// dashboard writes (the agent policy form). One fixed folder per port, made afresh by serve.mjs.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const E2E_PORT = Number(process.env.E2E_PORT ?? 3311);

export function e2eProjectDir(): string {
  return process.env.E2E_PROJECT_DIR ?? join(tmpdir(), `aqven-e2e-${E2E_PORT}`);
}
