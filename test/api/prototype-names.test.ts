// Names that are members of Object.prototype, through the dashboard's server (DESIGN: Project files,
// own entries): `POST /api/runs {"flow": "constructor"}` used to answer 202 and leave a run
// "running" forever, and saving the policy of agent "constructor" ended in an HTTP 500. A name
// the project does not have is now unknown (404, nothing stored); a project file that is named
// "constructor" or "toString" works like any other.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NextRequest } from 'next/server';
import { listPolicyRevisions } from '@/db/policy-queries';
import { listRuns } from '@/db/queries';
import { getRunRecord } from '@/lib/flow/stored-run';
import { own } from '@/lib/shared/own';
import { writeProject } from '@/test/helpers/fixture-project';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const CONSTRUCTOR_AGENT = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:constructor"\n'; // a model id "constructor" too
const TOSTRING_FLOW = [
  'apiVersion: "aqven/v1"',
  'kind: "Flow"',
  'input:',
  '  type: object',
  '  properties: { question: { type: string } }',
  'nodes:',
  '  constructor:',
  '    agent: "constructor"',
  '    prompt: "Answer: {{ input.question }}"',
  '',
].join('\n');

const env = { AQVEN_PROJECT: process.env.AQVEN_PROJECT, AQVEN_SIMULATE: process.env.AQVEN_SIMULATE };

beforeAll(async () => {
  process.env.AQVEN_PROJECT = await writeProject({ 'agents/constructor.yaml': CONSTRUCTOR_AGENT, 'flows/toString.yaml': TOSTRING_FLOW });
  process.env.AQVEN_SIMULATE = '1'; // no provider is ever called for real
});

afterAll(async () => {
  const { serverSession } = await import('@/lib/server/session');
  await (await serverSession()).close();
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const post = async (body: unknown) => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new NextRequest('http://localhost/api/runs', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...LOCAL_HEADERS } }),
  );
  return { status: res.status, body: (await res.json()) as { id?: string; error?: string } };
};

describe('POST /api/runs with a name of Object.prototype', () => {
  it.each(['constructor', '__proto__', 'toLocaleString', 'hasOwnProperty', 'valueOf', '__defineGetter__'])(
    'flow %j the project does not have: 404, nothing stored',
    async (flow) => {
      const res = await post({ flow, input: { question: 'q' } });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe(`unknown flow "${flow}"; the project has: ask, toString`);
      const { serverSession } = await import('@/lib/server/session');
      expect((await listRuns((await serverSession()).db)).items).toEqual([]);
    },
  );

  it('a flow named "toString" whose node and agent are named "constructor" runs like any other', async () => {
    const res = await post({ flow: 'toString', input: { question: 'q' } });
    expect(res.status).toBe(202);
    const { serverSession } = await import('@/lib/server/session');
    const { db } = await serverSession();
    await vi.waitFor(async () => expect((await getRunRecord(db, res.body.id!))?.status).toBe('succeeded'), { timeout: 15_000, interval: 20 });
    const record = (await getRunRecord(db, res.body.id!))!;
    expect(record.flow).toBe('toString');
    expect(record.nodes.map((n) => [n.id, n.agent, n.status])).toEqual([['constructor', 'constructor', 'succeeded']]);
    expect(record.nodes[0]!.attempts.map((a) => a.model)).toEqual(['openrouter:constructor']);
  });
});

describe('the agent policy form with a name of Object.prototype', () => {
  const form = (agent: string) => {
    const fd = new FormData();
    fd.set('agent', agent);
    fd.set('model', 'openrouter:openai/gpt-oss-20b');
    fd.set('retries', '2');
    for (const k of ['on_error', 'on_refusal', 'on_truncated']) fd.set(k, k === 'on_error' ? 'retry' : 'fail');
    return fd;
  };

  it.each(['toString', '__proto__', 'hasOwnProperty'])('agent %j the project does not have: a form error, no HTTP 500', async (agent) => {
    const { saveAgentPolicy } = await import('@/lib/actions/save-agent-policy');
    const state = await saveAgentPolicy({ ok: false }, form(agent));
    expect(state).toEqual({ ok: false, errors: { form: [{ code: 'E_AGENT', message: `the project has no agent "${agent}"` }] } });
  });

  it('agent "constructor" is saved like any other', async () => {
    const { saveAgentPolicy } = await import('@/lib/actions/save-agent-policy');
    const state = await saveAgentPolicy({ ok: false }, form('constructor'));
    expect(state).toMatchObject({ ok: true, revision: 1 });
    const { serverSession } = await import('@/lib/server/session');
    const s = await serverSession();
    expect(await listPolicyRevisions(s.db, 'constructor')).toHaveLength(1);
    expect(own(s.project.agents, 'constructor')?.output.retries).toBe(2);
  });
});
