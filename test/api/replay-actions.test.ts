// The replay actions and GET /api/replays/:batchId as the dashboard's callers meet them (DESIGN:
// The dashboard, "Replay with the current policy"): the preview and the replay read the agent file
// as it is now (a hand edit is picked up), an estimate over the cap is refused, a failure group is
// replayed in the background with its progress readable by any role, only editors may start one,
// and each replay counts against the caller's run starts per minute.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@/db/account-queries';
import { listAudit } from '@/db/audit-queries';
import { replayLink } from '@/db/replay-queries';
import type { Db } from '@/db/types';
import type { ReplayFormState } from '@/lib/forms/replay';
import type { BatchResponse } from '@/lib/dashboard/replay-types';
import { follow } from '../helpers/next-navigation';
import { FLASH_LITE, GPT_OSS } from '../helpers/showcase';
import { runEnded } from '../helpers/run-ended';
import { DRAFT_REFUSES, simulatedDashboard } from '../helpers/simulated-dashboard';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { requestHeaders, signedInUser } from '../helpers/session-cookie';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = { host: 'localhost' };

const dashboard = simulatedDashboard();
const T0 = Date.now();
let db: Db;
let dir: string;

const { server } = dashboard;
const replays = () => import('@/lib/server/replay');
const as = (token: string | null) => {
  req.headers = requestHeaders(LOCAL_HEADERS, token);
};
const form = (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
};
const IDLE: ReplayFormState = { status: 'idle' };
/** the replay action: its answer, or the run page it sent the browser to */
const replayNode = async (fields: Record<string, string>): Promise<ReplayFormState | { redirect: string }> => {
  const { replayNodeAction } = await import('@/lib/actions/replay-node');
  return follow(() => replayNodeAction(IDLE, form(fields)));
};
const replayGroup = async (fields: Record<string, string>) => (await import('@/lib/actions/replay-group')).replayGroupAction(IDLE, form(fields));
const getBatch = async (id: string, token: string | null) => {
  const { GET } = await import('@/app/api/replays/[batchId]/route');
  const res = await GET(new Request(`http://localhost/api/replays/${id}`, { headers: requestHeaders(LOCAL_HEADERS, token) }) as never, {
    params: Promise.resolve({ batchId: id }),
  });
  return { status: res.status, body: (await res.json()) as BatchResponse & { error?: string } };
};
const finished = (id: string) => runEnded(db, id);

/** A triage run whose draft failed: gpt-oss refuses, and the writer fails on a refusal (policy A). */
async function failedDraft(): Promise<string> {
  const res = await (await server()).startRun('triage', { ticket: `invoice wrong ${Math.random()}` });
  if (!res.ok) throw new Error(res.error);
  const f = await finished(res.id);
  expect(f.nodes.find((n) => n.id === 'draft')?.status).toBe('failed');
  return res.id;
}

beforeAll(async () => {
  const { session: s, dir: copied } = await dashboard.open({ scripts: DRAFT_REFUSES });
  dir = copied;
  db = s.db;
}, 90_000);

afterAll(() => dashboard.close());

describe('replay from the dashboard', () => {
  let originals: string[] = [];

  it('previews and replays a node under the agent file as edited since, refusing an estimate over the cap', async () => {
    as(null);
    originals = [await failedDraft(), await failedDraft(), await failedDraft()];
    const file = join(dir, 'agents', 'writer.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(
      file,
      text
        .replace(`model: "openrouter:${GPT_OSS}"\n`, `model: "openrouter:${GPT_OSS}"\nfallback_models:\n- "openrouter:${FLASH_LITE}"\n`)
        .replace('on_refusal: "fail"', 'on_refusal: "fallback"'),
    );

    const preview = await (await replays()).replayPreview(originals[0]!, 'draft');
    expect(preview).toMatchObject({ ok: true, simulated: true, chainNow: [`openrouter:${GPT_OSS}`, `openrouter:${FLASH_LITE}`], diff: { changed: false } });
    if (!preview.ok) throw new Error(preview.error);
    expect(preview.policy).toContain('onRefusal: fail  ⇒  fallback');
    expect(preview.estimate.costUsd).toBeGreaterThan(0);

    expect(await replayNode({ runId: originals[0]!, node: 'draft', cap: '0.0000000001' })).toMatchObject({ status: 'error', field: 'cap', code: 'E_CAP' });
    expect(await replayNode({ runId: originals[0]!, node: 'nope', cap: '1' })).toMatchObject({ status: 'error', field: 'form', code: 'E_NODE' });
    const sent = await replayNode({ runId: originals[0]!, node: 'draft', cap: '1' });
    expect(sent).toMatchObject({ redirect: expect.stringMatching(/^\/runs\/[0-9a-f-]{36}$/) });
    const id = (sent as { redirect: string }).redirect.split('/').pop()!;
    expect((await finished(id)).status).toBe('succeeded');
    expect(await replayLink(db, id)).toEqual({ kind: 'replay', replayOf: originals[0], replayNode: 'draft' });
    expect(await (await replays()).replayContext(originals[0]!)).toMatchObject({ kind: 'flow', replays: [{ id, node: 'draft', status: 'succeeded' }] });
    expect(await (await replays()).replayContext(id)).toMatchObject({
      kind: 'replay',
      replayOf: originals[0],
      node: 'draft',
      original: { node: { id: 'draft', status: 'failed' } },
    });
  });

  it('replays a failure group in the background; its progress ends with how many now succeed', async () => {
    const [row] = await db.q
      .select({ sig: db.t.nodeRuns.failureSig })
      .from(db.t.nodeRuns)
      .where(and(eq(db.t.nodeRuns.runId, originals[1]!), eq(db.t.nodeRuns.nodeId, 'draft'), isNotNull(db.t.nodeRuns.failureSig)));
    const sig = row!.sig!;
    const started = await replayGroup({ sig, since: String(T0 - 60_000), cap: '1' });
    expect(started).toMatchObject({ status: 'started', total: 3 });
    const batchId = (started as { batchId: string }).batchId;
    // the audit trail names the batch and its group; nobody was signed in (the dashboard is open)
    expect((await listAudit(db, { kind: 'replay-batch.started' })).rows.map((r) => [r.actor, r.target, r.detail])).toEqual([[null, batchId, { group: sig, nodes: 3, capUsd: 1 }]]);
    let body: BatchResponse | null = null;
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      const got = await getBatch(batchId, null);
      expect(got.status).toBe(200);
      if (got.body.done) {
        body = got.body;
        break;
      }
    }
    expect(body).toMatchObject({ total: 3, done: true, stopped: null, counts: { succeeded: 3, failed: 0, not_started: 0 }, label: sig });
    expect(body!.peakRunning).toBeLessThanOrEqual(4);
    expect(new Set(body!.items.map((i) => i.runId))).toEqual(new Set(originals));
    expect((await getBatch('no-such-batch', null)).status).toBe(404);
  });

  it('once accounts exist: a viewer may read a batch but not replay; each replay counts against the run starts per minute', async () => {
    await createUser(db, { name: 'admin', role: 'admin', password: 'a long enough password' }, T0);
    const viewer = await signedInUser(db, 'vera', 'viewer', T0);
    const editor = await signedInUser(db, 'ed', 'editor', T0);

    as(viewer);
    expect(await replayNode({ runId: originals[1]!, node: 'draft', cap: '1' })).toMatchObject({ status: 'error', code: 'E_FORBIDDEN' });
    expect(await replayGroup({ sig: 'x', since: '0', cap: '1' })).toMatchObject({ status: 'error', code: 'E_FORBIDDEN' });
    expect((await listAudit(db, { kind: 'replay-batch.started' })).rows).toHaveLength(1); // a refusal records nothing
    expect((await getBatch('no-such-batch', null)).status).toBe(401);

    process.env.AQVEN_RUNS_PER_MINUTE = '1';
    as(editor);
    const first = await replayNode({ runId: originals[1]!, node: 'draft', cap: '1' });
    expect(first).toMatchObject({ redirect: expect.any(String) });
    await finished((first as { redirect: string }).redirect.split('/').pop()!);
    expect(await replayNode({ runId: originals[2]!, node: 'draft', cap: '1' })).toMatchObject({
      status: 'error',
      code: 'E_LIMIT',
      message: expect.stringMatching(/too many runs started/),
    });
    delete process.env.AQVEN_RUNS_PER_MINUTE;
  });
});
