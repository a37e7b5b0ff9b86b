// Stages one exact scenario on the dashboard's in-process simulator (POST /api/sim/scripts):
// each model plays its script one step per request, then repeats the last step. Scripts replace
// the chaos profile for the models they name; `{}` gives every model back to the chaos.
import type { APIRequestContext } from '@playwright/test';
import { expect } from '@playwright/test';
import { originOf } from './project-dir';

/** This worker's server's origin: the dashboard refuses a state-changing request without it
 * (proxy.ts); a browser sends it, Playwright's API client does not. */
export const E2E_ORIGIN = originOf();

export const GEMINI = 'google/gemini-2.5-flash-lite';
export const GPT = 'openai/gpt-oss-20b';

export type Step = Record<string, unknown> & { kind: string };

export async function loadScripts(request: APIRequestContext, scripts: Record<string, Step[]>): Promise<void> {
  const res = await request.post('/api/sim/scripts', { data: { scripts }, headers: { Origin: E2E_ORIGIN } });
  expect(res.status(), await res.text()).toBe(200);
}

export async function resetScripts(request: APIRequestContext): Promise<void> {
  await loadScripts(request, {});
}

const FINISHED = ['succeeded', 'failed', 'interrupted'];

/** Starts a run through the API and waits until it has finished; returns its id and status. */
export async function runToEnd(request: APIRequestContext, flow: string, input: unknown): Promise<{ id: string; status: string }> {
  const res = await request.post('/api/runs', { data: { flow, input }, headers: { Origin: E2E_ORIGIN } });
  expect(res.status(), await res.text()).toBe(202);
  const { id } = (await res.json()) as { id: string };
  return { id, status: await waitForRun(request, id) };
}

/** Waits until a run has finished (a spec leaves no run in flight to eat the next spec's scripts). */
export async function waitForRun(request: APIRequestContext, id: string, headers?: Record<string, string>, timeout = 30_000): Promise<string> {
  let status = 'running';
  // the run is stored before the 202 is sent
  expect((await request.get(`/api/runs/${id}`, { headers })).status()).toBe(200);
  await expect
    .poll(
      async () => {
        const got = await request.get(`/api/runs/${id}`, { headers });
        status = got.ok() ? ((await got.json()) as { status: string }).status : 'unknown';
        return FINISHED.includes(status);
      },
      { timeout },
    )
    .toBe(true);
  return status;
}
