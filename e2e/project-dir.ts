// The e2e servers: one per Playwright worker, so specs running at once never share a database, the
// simulator's scripts, a rate-limit pause, agent files, accounts or a per-minute run limit. Worker N
// (Playwright's TEST_PARALLEL_INDEX) talks to the server on E2E_PORT + N, whose copy of the showcase
// project lives in a fixed folder per port (made afresh by serve.mjs), so a spec can read the files
// the dashboard writes (the agent policy form).
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function whole(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}=${raw}: must be a whole number from ${min} to ${max}`);
  return n;
}

/** The first server's port; server N listens on E2E_PORT + N. */
export const E2E_BASE_PORT = whole('E2E_PORT', 3311, 1024, 65000);
/** How many workers run the specs, each with a server of its own (playwright.config.ts). */
export const E2E_WORKERS = whole('E2E_WORKERS', 2, 1, 8);

/** This process's server: its worker's parallel index (0 in Playwright's runner process). */
export const E2E_SERVER = Number(process.env.TEST_PARALLEL_INDEX ?? 0);
if (E2E_SERVER >= E2E_WORKERS) {
  throw new Error(`Playwright worker ${E2E_SERVER} has no e2e server (E2E_WORKERS=${E2E_WORKERS}): set E2E_WORKERS instead of --workers`);
}

export function portOf(server: number): number {
  return E2E_BASE_PORT + server;
}

/** This worker's server. */
export const E2E_PORT = portOf(E2E_SERVER);

/** The origin of a server: the dashboard refuses a state-changing request without it (proxy.ts). */
export function originOf(server = E2E_SERVER): string {
  return `http://127.0.0.1:${portOf(server)}`;
}

export function e2eProjectDir(server = E2E_SERVER): string {
  return join(tmpdir(), `aqven-e2e-${portOf(server)}`);
}

/** The editor's signed-in browser state on a server (written by auth.setup.ts). */
export function editorState(server = E2E_SERVER): string {
  return `e2e/.auth/editor-${portOf(server)}.json`;
}
