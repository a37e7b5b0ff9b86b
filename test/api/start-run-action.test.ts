// The /flows start form and `POST /api/runs` share one count of the caller's run starts per minute
// (DESIGN: The dashboard, "Accounts, roles and tokens", *Run limit*): a start refused by either says
// when to try again, and starts nothing.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createToken, createUser } from '@/db/account-queries';
import type { Db } from '@/db/types';
import type { StartRunFormState } from '@/lib/forms/start-run';
import { follow } from '../helpers/next-navigation';
import { runEnded } from '../helpers/run-ended';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const req = vi.hoisted(() => ({ headers: { host: 'localhost' } as Record<string, string> }));
vi.mock('server-only', () => ({}));
vi.mock('next/headers', () => ({ headers: async () => new Headers(req.headers) }));
vi.mock('next/cache', () => ({ revalidatePath: () => {} }));
vi.mock('next/navigation', () => import('@/test/helpers/next-navigation'));

const dashboard = simulatedDashboard();
const T0 = Date.now();
let db: Db;
let token: string;

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
  const res = await POST(new Request('http://localhost/api/runs', { method: 'POST', headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ flow: 'triage', input: JSON.parse(INPUT) }) }) as never);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { id?: string; error?: string } };
};
const runCount = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;

beforeAll(async () => {
  ({ session: { db } } = await dashboard.open());
  await createUser(db, { name: 'admin', role: 'admin', password: 'a long enough password' }, T0);
  token = (await createToken(db, { name: 'ed', role: 'editor', createdBy: 'admin' }, T0)).token;
  req.headers = { host: 'localhost', authorization: `Bearer ${token}` };
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
});
