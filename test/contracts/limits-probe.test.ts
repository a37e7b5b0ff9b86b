// The start-a-limits-probe contract (lib/contracts/limits-probe.ts, usd-amount.ts) at its two doors:
// the "Measure limits" form's action and `aqven limits MODEL` (in-process, through its CliIo). The
// same bad values are refused at both with the same words — each door naming the field its own way
// (a label, a flag) — before anything runs: the form on its field with E_FORM, the command with exit
// 2. The bounds are the form's at both (a typo of a few zeros is no blank cheque at the shell either).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartLimitsState } from '@/lib/forms/limits';
import { captureIo } from '@/lib/cli/io';
import { FLASH_LITE } from '../helpers/showcase';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
const MODEL = `openrouter:${FLASH_LITE}`;
let dir: string;

const GOOD = { model: MODEL, dimension: 'depth', trials: '4', maxCalls: '100', maxCost: '1' };
type Values = Partial<typeof GOOD>;

const form = async (values: Values): Promise<StartLimitsState> => {
  return (await import('@/lib/actions/start-limits')).startLimitsAction({ status: 'idle' }, formData({ ...GOOD, ...values }));
};
const cli = async (values: Values) => {
  const { model, ...flags } = { ...GOOD, ...values };
  const io = captureIo();
  const code = await (await import('@/lib/cli/limits')).runLimits(model, { project: dir, simulate: true, ...flags }, io, { env: {} });
  return { code, stderr: io.stderr, stdout: io.stdout };
};

beforeAll(async () => {
  ({ dir } = await dashboard.open());
}, 90_000);

afterAll(() => dashboard.close());

describe('start a limits probe: the same refusal at both doors', () => {
  it.each([
    ['trials', { trials: '0' }, 'trials per level', '--trials', ' must be a whole number from 1 to 50, got "0"'],
    ['trials', { trials: '51' }, 'trials per level', '--trials', ' must be a whole number from 1 to 50, got "51"'],
    ['trials', { trials: '1e1' }, 'trials per level', '--trials', ' must be a whole number from 1 to 50, got "1e1"'],
    ['maxCalls', { maxCalls: '1' }, 'the call budget', '--max-calls', ' must be a whole number from 2 to 5,000, got "1"'],
    ['maxCalls', { maxCalls: '5001' }, 'the call budget', '--max-calls', ' must be a whole number from 2 to 5,000, got "5001"'],
    ['maxCost', { maxCost: 'lots' }, 'the cost cap', '--max-cost', ' must be an amount in USD above 0, got "lots"'],
    ['maxCost', { maxCost: '-1' }, 'the cost cap', '--max-cost', ' must be an amount in USD above 0, got "-1"'],
    ['maxCost', { maxCost: '100.5' }, 'the cost cap', '--max-cost', ' must be at most $100, got "100.5"'],
    ['dimension', { dimension: 'width' }, 'the dimension', '--dimension', ' must be depth, list, enum or all, got "width"'],
    ['model', { model: `openrouter:${'x'.repeat(300)}` }, 'the model', 'the model', ' is at most 300 characters'],
  ] as const)('%s %j', async (field, values, label, flag, words) => {
    expect(await form(values)).toEqual({ status: 'error', field, code: 'E_FORM', message: `${label}${words}` });
    expect(await cli(values)).toEqual({ code: 2, stderr: `aqven limits: ${flag}${words}\n`, stdout: '' });
  });

  it('a model the project does not have: E_MODEL on the form, exit 2 at the shell, the same words', async () => {
    const f = await form({ model: 'openrouter:nobody/unknown' });
    expect(f).toMatchObject({ status: 'error', field: 'model', code: 'E_MODEL' });
    const c = await cli({ model: 'openrouter:nobody/unknown' });
    expect(c).toEqual({ code: 2, stderr: `aqven limits: ${(f as { message: string }).message}\n`, stdout: '' });
  });

  it('a cost cap written with a leading $ and spaces is read as its amount', async () => {
    const { startLimitsProbeSchema } = await import('@/lib/contracts/limits-probe');
    expect(startLimitsProbeSchema.parse({ ...GOOD, maxCost: ' $2 ' })).toMatchObject({ maxCostUsd: 2, threshold: 0.9, maxTokens: 8192, dimensions: ['depth'] });
  });
});
