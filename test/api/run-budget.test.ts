// A caller whose daily spend budget is spent starts nothing (DESIGN: The dashboard, "Spend
// budgets"): `POST /api/runs` answers 429 with E_BUDGET and Retry-After until 00:00 UTC, the /flows
// form shows the same words, and a replay or a limits probe is refused alike — before anything is
// stored or queued. A user's budget and a token's; once the budget is removed, runs start again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, setTokenBudget, setUserBudget } from '@/db/account-queries';
import { addSpend } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import type { ReplayFormState } from '@/lib/forms/replay';
import type { StartLimitsState } from '@/lib/forms/limits';
import type { StartRunFormState } from '@/lib/forms/start-run';
import { follow } from '../helpers/next-navigation';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { runEnded } from '../helpers/run-ended';
import { requestHeaders, signedInUser } from '../helpers/session-cookie';
import { FLASH_LITE } from '../helpers/showcase';
import { DRAFT_REFUSES, simulatedDashboard } from '../helpers/simulated-dashboard';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const dashboard = simulatedDashboard();
let db: Db;
let cookie: string;
const INPUT = { ticket: 'my invoice is wrong' };
const SPENT = /^user ed's budget of \$1\.00\/day is spent \(\$1\.00 today\); it resets at 00:00 UTC \(in (\d+ h( \d+ min)?|\d+ min)\)$/; // fmtWait drops '0 min' on the hour

const form = (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
};
const startFromForm = async (): Promise<StartRunFormState | { redirect: string }> => {
  const { startRunAction } = await import('@/lib/actions/start-run');
  return follow(() => startRunAction({}, form({ flow: 'triage', input: JSON.stringify(INPUT) })));
};
const startFromApi = async (credential: string) => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new Request('http://localhost/api/runs', {
      method: 'POST',
      headers: { ...requestHeaders(LOCAL_HEADERS, credential), 'content-type': 'application/json' },
      body: JSON.stringify({ flow: 'triage', input: INPUT }),
    }) as never,
  );
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { id?: string; error?: string; code?: string } };
};
const runCount = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;

beforeAll(async () => {
  ({
    session: { db },
  } = await dashboard.open({ scripts: DRAFT_REFUSES }));
  cookie = await signedInUser(db, 'ed', 'editor');
  req.headers = requestHeaders(LOCAL_HEADERS, cookie);
  await setUserBudget(db, 'ed', 1);
  await addSpend(db, db.q, 'ed', 1, Date.now());
}, 90_000);

afterAll(() => dashboard.close());

describe('a spent budget refuses every start', () => {
  it('POST /api/runs answers 429 E_BUDGET with Retry-After until 00:00 UTC; the start form shows the same refusal; nothing is stored', async () => {
    const before = await runCount();
    const api = await startFromApi(cookie);
    expect(api.status).toBe(429);
    expect(api.body).toEqual({ error: expect.stringMatching(SPENT), code: 'E_BUDGET' });
    const untilMidnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000 - Date.now();
    expect(Number(api.retryAfter)).toBeGreaterThanOrEqual(Math.floor(untilMidnight / 1000) - 60);
    expect(Number(api.retryAfter)).toBeLessThanOrEqual(Math.ceil(untilMidnight / 1000) + 1);
    expect(await startFromForm()).toEqual({ budget: expect.stringMatching(SPENT) });
    expect(await runCount()).toBe(before);
  });

  it('a replay and a limits probe are refused alike', async () => {
    // a run of nobody's (the server's own session) to replay
    const { startRun } = await dashboard.server();
    const original = await startRun('triage', INPUT);
    if (!original.ok) throw new Error(original.error);
    await runEnded(db, original.id);
    const before = await runCount();
    const { replayNodeAction } = await import('@/lib/actions/replay-node');
    const replay = (await follow(() => replayNodeAction({ status: 'idle' }, form({ runId: original.id, node: 'draft', cap: '1' })))) as ReplayFormState;
    expect(replay).toMatchObject({ status: 'error', code: 'E_BUDGET', message: expect.stringMatching(SPENT) });
    const { startLimitsAction } = await import('@/lib/actions/start-limits');
    const probe = await startLimitsAction(
      { status: 'idle' } as StartLimitsState,
      form({ model: `openrouter:${FLASH_LITE}`, dimension: 'depth', trials: '4', maxCalls: '100', maxCost: '1' }),
    );
    expect(probe).toMatchObject({ status: 'error', code: 'E_BUDGET', message: expect.stringMatching(SPENT) });
    expect(await runCount()).toBe(before);
  });

  it("a token's budget holds its API starts; once removed, runs start again", async () => {
    const { token } = await createToken(db, { name: 'ci', role: 'editor', createdBy: 'ed', budgetUsdPerDay: 0.5 }, Date.now());
    await addSpend(db, db.q, 'token:ci', 0.75, Date.now());
    const refused = await startFromApi(token);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^token ci's budget of \$0\.50\/day is spent \(\$0\.75 today\)/);
    await setTokenBudget(db, 'ci', null);
    const started = await startFromApi(token);
    expect(started.status).toBe(202);
    expect(await runEnded(db, started.body.id!)).toMatchObject({ startedBy: 'token:ci' });
  });
});
