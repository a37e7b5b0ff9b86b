// The start-a-run contract (lib/contracts/start-run.ts, input-size.ts) at its three doors: POST
// /api/runs, the /flows form's action, and `aqven run` (a real process: the command has no CliIo
// seam). The same bad requests — no flow, an unknown flow, text that is not JSON, an input its flow's
// schema refuses, one over AQVEN_MAX_INPUT_BYTES — are refused at each with the same code and words
// (each door naming the field its own way), and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@/db/types';
import type { StartRunFormState } from '@/lib/forms/start-run';
import { aqven, ensureCliBuilt } from '../cli/aqven-process';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';
import { follow } from '../helpers/next-navigation';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let db: Db;
let dir: string;

/** POST /api/runs with `body` as its JSON */
const api = async (body: unknown) => {
  const { POST } = await import('@/app/api/runs/route');
  const res = await POST(
    new Request('http://localhost/api/runs', { method: 'POST', headers: { ...LOCAL_HEADERS, 'content-type': 'application/json' }, body: JSON.stringify(body) }) as never,
  );
  return { status: res.status, body: (await res.json()) as { error?: string; code?: string; field?: string } };
};
/** the /flows form, its input as typed */
const form = async (flow: string, input: string): Promise<StartRunFormState | { redirect: string }> => {
  const { startRunAction } = await import('@/lib/actions/start-run');
  return follow(() => startRunAction({}, formData({ flow, input })));
};
/** `aqven run FLOW --input TEXT` */
const cli = (flow: string, input: string, env: Record<string, string> = {}) => aqven(['run', flow, '--project', dir, '--simulate', '--input', input], env);
const runCount = async () => (await db.q.select({ id: db.t.runs.id }).from(db.t.runs)).length;

beforeAll(async () => {
  ({
    session: { db },
    dir,
  } = await dashboard.open());
  ensureCliBuilt();
}, 180_000);

afterAll(() => dashboard.close());

describe('start a run: the same refusal at every door', () => {
  it('an input its flow’s schema refuses: E_INPUT naming the field', async () => {
    const before = await runCount();
    const words = 'input.ticket must be string (flow triage, flows/triage.yaml)';
    expect(await api({ flow: 'triage', input: { ticket: 1 } })).toEqual({ status: 400, body: { error: words, code: 'E_INPUT', field: 'input.ticket' } });
    expect(await form('triage', '{"ticket": 1}')).toEqual({ fieldErrors: { input: words }, inputField: 'input.ticket' });
    const c = cli('triage', '{"ticket": 1}');
    expect([c.code, c.err]).toEqual([2, `aqven run: ${words}\n`]);
    expect(await runCount()).toBe(before);
  }, 60_000);

  it('an input over AQVEN_MAX_INPUT_BYTES: the same words, nothing stored', async () => {
    const before = await runCount();
    const input = { ticket: 'x'.repeat(100) };
    const words = 'input is 113 bytes as JSON; a run input may be at most 64 bytes (64 bytes, AQVEN_MAX_INPUT_BYTES) — nothing was stored';
    process.env.AQVEN_MAX_INPUT_BYTES = '64';
    try {
      expect(await api({ flow: 'triage', input })).toEqual({ status: 400, body: { error: words, code: 'E_INPUT', field: 'input' } });
      expect(await form('triage', JSON.stringify(input))).toEqual({ fieldErrors: { input: words }, inputField: 'input' });
    } finally {
      delete process.env.AQVEN_MAX_INPUT_BYTES;
    }
    const c = cli('triage', JSON.stringify(input), { AQVEN_MAX_INPUT_BYTES: '64' });
    expect([c.code, c.err]).toEqual([2, `aqven run: ${words}\n`]);
    expect(await runCount()).toBe(before);
  }, 60_000);

  it('a flow the project does not have, and no flow at all: E_FLOW', async () => {
    const unknown = 'unknown flow "nope"; the project has: ';
    const a = await api({ flow: 'nope', input: {} });
    expect([a.status, a.body.code, a.body.error]).toEqual([404, 'E_FLOW', expect.stringContaining(unknown)]);
    expect(await form('nope', '{}')).toMatchObject({ fieldErrors: { flow: a.body.error } });
    expect(cli('nope', '{}')).toMatchObject({ code: 2, err: `aqven run: ${a.body.error}\n` });
    // no name: each door names the field its own way, the rule's words are the same
    expect(await api({ input: {} })).toEqual({ status: 400, body: { error: 'field "flow" must be a flow name', code: 'E_FLOW' } });
    expect(await api({ flow: '', input: {} })).toEqual({ status: 400, body: { error: 'field "flow" must be a flow name', code: 'E_FLOW' } });
    expect(await form('', '{}')).toEqual({ fieldErrors: { flow: 'the flow must be a flow name' } });
    expect(cli('', '{}')).toMatchObject({ code: 2, err: 'aqven run: the flow must be a flow name\n' });
  }, 60_000);

  it('text that is not JSON (the form and the command take the input as text): E_JSON, the parser’s words', async () => {
    const f = (await form('triage', '{ticket')) as StartRunFormState;
    const c = cli('triage', '{ticket');
    expect(f.fieldErrors?.input).toMatch(/^the input is not valid JSON: /);
    expect(c.code).toBe(2);
    expect(c.err).toBe(`aqven run: ${f.fieldErrors!.input!.replace(/^the input/, '--input')}\n`);
  }, 60_000);
});
