// The /flows start form and `POST /api/runs` share one count of the caller's run starts per minute
// (DESIGN: The dashboard, "Accounts, roles and tokens", *Run limit*): a start refused by either says
// when to try again, and starts nothing. One caller through both doors: a signed-in user (an API
// token is accepted by the API alone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, createUser } from '@/db/account-queries';
import type { Db } from '@/db/types';
import type { StartRunFormState } from '@/lib/forms/start-run';
import { follow } from '../helpers/next-navigation';
import { sessionCookie } from '../helpers/session-cookie';
import { runEnded } from '../helpers/run-ended';
import { simulatedDashboard } from '../helpers/simulated-dashboard';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const dashboard = simulatedDashboard();
const T0 = Date.now();
let db: Db;
let cookie: string;
const PASSWORD = 'a long enough password';

const INPUT = JSON.stringify({ ticket: 'my invoice is wrong' });
const startFromForm = async (): Promise<StartRunFormState | { redirect: string }> => {
  const fd = new FormData();
  fd.set('flow', 'triage');
  fd.set('input', INPUT);
  const { startRunAction } = await import('@/lib/actions/start-run');
  return follow(() => startRunAction({}, fd));
};
const startFromApi = async () => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new Request('http://localhost/api/runs', {
      method: 'POST',
      headers: { ...LOCAL_HEADERS, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ flow: 'triage', input: JSON.parse(INPUT) }),
    }) as never,
  );
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { id?: string; error?: string } };
};
const runCount = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;

beforeAll(async () => {
  ({
    session: { db },
  } = await dashboard.open());
  await createUser(db, { name: 'admin', role: 'admin', password: PASSWORD }, T0);
  await createUser(db, { name: 'ed', role: 'editor', password: PASSWORD }, T0);
  cookie = await sessionCookie(db, 'ed', PASSWORD);
  req.headers = { ...LOCAL_HEADERS, cookie };
}, 90_000);

afterAll(async () => {
  delete process.env.AQVEN_RUNS_PER_MINUTE;
  await dashboard.close();
});

describe('run starts per minute, from the form and the API', () => {
  it('counts a form start and an API start against one limit, and refuses the next of either', async () => {
    process.env.AQVEN_RUNS_PER_MINUTE = '2';
    const api = await startFromApi();
    expect(api.status).toBe(202);
    const form = await startFromForm();
    expect(form).toMatchObject({ redirect: expect.stringMatching(/^\/runs\//) });
    await runEnded(db, api.body.id!);
    await runEnded(db, (form as { redirect: string }).redirect.split('/').pop()!);
    const before = await runCount();

    const refused = await startFromForm();
    expect(refused).toEqual({ limited: expect.stringMatching(/too many runs started: at most 2 a minute \(AQVEN_RUNS_PER_MINUTE\); try again in \d+ s/) });
    const apiRefused = await startFromApi();
    expect(apiRefused.status).toBe(429);
    expect(Number(apiRefused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(await runCount()).toBe(before);
  });

  it('an API token starts runs through the API only: the form refuses it, whatever its role', async () => {
    process.env.AQVEN_RUNS_PER_MINUTE = '60';
    const { token } = await createToken(db, { name: 'ci', role: 'admin', createdBy: 'admin', expiresAt: null }, T0);
    req.headers = { ...LOCAL_HEADERS, authorization: `Bearer ${token}` };
    try {
      const before = await runCount();
      expect(await startFromForm()).toEqual({ fieldErrors: { flow: 'API tokens are accepted by the /api routes only: sign in to use the dashboard' } });
      expect(await runCount()).toBe(before);
    } finally {
      req.headers = { ...LOCAL_HEADERS, cookie };
    }
  });
});
