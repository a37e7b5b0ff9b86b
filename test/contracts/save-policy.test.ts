// The save-a-policy contract (lib/contracts/save-policy.ts: the agent file's own rules, those of
// `aqven check`) at its one door, the agent policy form's action: a policy the rules refuse is
// refused at the fields the contract's issues name, with their codes and words, and nothing is
// written; a save that names no agent is E_AGENT.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savePolicySchema } from '@/lib/contracts/save-policy';
import { policyErrors, policyInput } from '@/lib/forms/agent-policy';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let dir: string;
const POLICY = { model: 'openrouter:openai/gpt-oss-20b', retries: '1', on_error: 'retry', on_refusal: 'fail', on_truncated: 'fail' };
const save = async (values: Record<string, string | string[]>) => (await import('@/lib/actions/save-agent-policy')).saveAgentPolicy({}, formData(values));

beforeAll(async () => {
  ({ dir } = await dashboard.open());
}, 90_000);

afterAll(() => dashboard.close());

describe('save a policy: the contract’s refusal at the door', () => {
  it.each([
    ['retries out of range', { retries: '99' }],
    ['a model id a URL would read as structure', { model: 'google:x/../v1beta?' }],
    ['on_truncated: fallback without a fallback model', { on_truncated: 'fallback' }],
    ['the primary model again as a fallback', { fallback_models: ['openrouter:openai/gpt-oss-20b'] }],
  ])('%s', async (_what, change) => {
    const before = readFileSync(join(dir, 'agents', 'writer.yaml'), 'utf8');
    const values = { agent: 'writer', ...POLICY, ...change };
    const parsed = savePolicySchema.safeParse(policyInput(formData(values)));
    expect(parsed.success).toBe(false);
    expect(await save(values)).toEqual({ ok: false, errors: policyErrors(parsed.error!) });
    expect(readFileSync(join(dir, 'agents', 'writer.yaml'), 'utf8')).toBe(before);
  });

  it('no agent named, or one the project does not have: E_AGENT', async () => {
    expect(await save({ ...POLICY })).toEqual({ ok: false, errors: { form: [{ code: 'E_AGENT', message: 'the agent is missing' }] } });
    expect(await save({ agent: 'nobody', ...POLICY })).toEqual({ ok: false, errors: { form: [{ code: 'E_AGENT', message: 'the project has no agent "nobody"' }] } });
  });
});
