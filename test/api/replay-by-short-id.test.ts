// The dashboard's replay takes a run's short id or a unique prefix as every run route does (DESIGN:
// Search, "Short run ids"): the preview page goes on to the full id, an ambiguous prefix lists the
// runs it names (never one guessed), the start action replays the run it names; and the replay's
// record, as GET /api/runs/:id and the run list answer it, says it is a replay of that run.
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import type { ReplayFormState } from '@/lib/forms/replay';
import { shortRunId } from '@/lib/shared/short-id';
import { follow } from '../helpers/next-navigation';
import { runEnded } from '../helpers/run-ended';
import { DRAFT_REFUSES, simulatedDashboard } from '../helpers/simulated-dashboard';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const dashboard = simulatedDashboard();
let db: Db;
const { server } = dashboard;

const previewPage = async (runId: string, node: string) => {
  const { default: ReplayPage } = await import('@/app/runs/[runId]/replay/page');
  return follow(() => ReplayPage({ params: Promise.resolve({ runId }), searchParams: Promise.resolve({ node }) }));
};
const replayNode = async (runId: string, node: string) => {
  const { replayNodeAction } = await import('@/lib/actions/replay-node');
  const fd = new FormData();
  for (const [k, v] of Object.entries({ runId, node, cap: '1' })) fd.set(k, v);
  return follow(() => replayNodeAction({ status: 'idle' } as ReplayFormState, fd));
};
const getJson = async (url: string) => {
  const req = new NextRequest(`http://localhost${url}`, { headers: LOCAL_HEADERS });
  if (url.startsWith('/api/runs/')) {
    const { GET } = await import('@/app/api/runs/[id]/route');
    return (await GET(req, { params: Promise.resolve({ id: url.split('/').pop()! }) })).json();
  }
  const { GET } = await import('@/app/api/runs/route');
  return (await GET(req)).json();
};

/** A triage run whose draft failed (gpt-oss refuses, the writer fails on a refusal). */
async function failedDraft(): Promise<string> {
  const res = await (await server()).startRun('triage', { ticket: `short ids ${Math.random()}` });
  if (!res.ok) throw new Error(res.error);
  expect((await runEnded(db, res.id)).nodes.find((n) => n.id === 'draft')?.status).toBe('failed');
  return res.id;
}

beforeAll(async () => {
  db = (await dashboard.open({ scripts: DRAFT_REFUSES })).session.db;
}, 90_000);

afterAll(() => dashboard.close());

describe('replay by short id on the dashboard', () => {
  it('the preview page goes on to the full id; an ambiguous prefix lists the runs; the action replays the run a short id names', async () => {
    const [a, b] = [await failedDraft(), await failedDraft()];
    const short = shortRunId(a);

    expect(await previewPage(short, 'draft')).toEqual({ redirect: `/runs/${a}/replay?node=draft` });
    expect(await previewPage(a.slice(0, 13), 'draft')).toEqual({ redirect: `/runs/${a}/replay?node=draft` });
    // the full id renders the preview itself
    expect(await previewPage(a, 'draft')).not.toHaveProperty('redirect');

    // both ids start with the same milliseconds-since-1970 digits (UUID v7): a prefix of them names both
    let common = 0;
    while (a[common] === b[common]) common++;
    const prefix = a.slice(0, Math.min(common, 8));
    expect(prefix.length).toBeGreaterThanOrEqual(4);
    const listed = (await previewPage(prefix, 'draft')) as { props: { prefix: string; matches: { id: string }[] } };
    expect(listed.props.prefix).toBe(prefix);
    expect(listed.props.matches.map((m) => m.id)).toEqual([b, a]);
    // each choice leads to the replay of the same node, not to the run page
    expect((listed.props as unknown as { hrefOf: (id: string) => string }).hrefOf(a)).toBe(`/runs/${a}/replay?node=draft`);
    expect(await replayNode(prefix, 'draft')).toMatchObject({ status: 'error', code: 'E_RUN_AMBIGUOUS', message: expect.stringContaining('names 2 runs') });

    const sent = await replayNode(short, 'draft');
    expect(sent).toMatchObject({ redirect: expect.stringMatching(/^\/runs\/[0-9a-f-]{36}$/) });
    const replayId = (sent as { redirect: string }).redirect.split('/').pop()!;
    await runEnded(db, replayId);

    // the record and the run list say what it is
    expect(await getJson(`/api/runs/${replayId}`)).toMatchObject({ id: replayId, kind: 'replay', replayOf: a, replayNode: 'draft' });
    expect(await getJson(`/api/runs/${a}`)).toMatchObject({ id: a, kind: 'flow', replayOf: null, replayNode: null });
    const list = (await getJson('/api/runs?limit=10')) as { items: { id: string; kind: string; replayOf: string | null; replayNode: string | null; startedAt: unknown }[] };
    expect(list.items.find((r) => r.id === replayId)).toMatchObject({ kind: 'replay', replayOf: a, replayNode: 'draft', startedAt: expect.any(Number) });
  }, 120_000);
});
