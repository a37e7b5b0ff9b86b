// The replay contracts (lib/contracts/replay.ts, usd-amount.ts) at their doors: the replay-one-node
// form's action and `aqven replay RUN NODE` (in-process, through its CliIo), and the replay-a-group
// form's action. The same bad cap and ids are refused at each with the same words (each door naming
// the field its own way), and a run that is not stored with the same code and words, before
// anything runs. The command may leave --cap out (no cap: a shell on the server); a cap it is given
// keeps the forms' bounds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '@/lib/cli/io';
import type { ReplayFormState } from '@/lib/forms/replay';
import { follow } from '../helpers/next-navigation';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
let dir: string;

const nodeForm = async (runId: string, node: string, cap: string) =>
  (await follow(async () => (await import('@/lib/actions/replay-node')).replayNodeAction({ status: 'idle' }, formData({ runId, node, cap })))) as ReplayFormState;
const groupForm = async (sig: string, since: string, cap: string) =>
  (await import('@/lib/actions/replay-group')).replayGroupAction({ status: 'idle' }, formData({ sig, since, cap }));
const cli = async (runId: string, node: string, cap?: string) => {
  const io = captureIo();
  const code = await (await import('@/lib/cli/replay')).runReplay(runId, node, { project: dir, simulate: true, ...(cap !== undefined && { cap }) }, io);
  return { code, stderr: io.stderr, stdout: io.stdout };
};

beforeAll(async () => {
  ({ dir } = await dashboard.open());
}, 90_000);

afterAll(() => dashboard.close());

describe('replay: the same refusal at every door', () => {
  it.each([
    ['0', ' must be an amount in USD above 0, got "0"'],
    ['abc', ' must be an amount in USD above 0, got "abc"'],
    ['-1', ' must be an amount in USD above 0, got "-1"'],
    ['1001', ' must be at most $1,000, got "1001"'],
  ])('a cap of %j', async (cap, words) => {
    expect(await nodeForm('some-run', 'draft', cap)).toEqual({ status: 'error', field: 'cap', code: 'E_FORM', message: `the cost cap${words}` });
    expect(await groupForm('0123456789abcdef', '0', cap)).toEqual({ status: 'error', field: 'cap', code: 'E_FORM', message: `the cost cap${words}` });
    expect(await cli('some-run', 'draft', cap)).toEqual({ code: 2, stderr: `aqven replay: --cap${words}\n`, stdout: '' });
  });

  it('an empty or overlong run id or node', async () => {
    expect(await nodeForm('', 'draft', '1')).toEqual({ status: 'error', field: 'form', code: 'E_FORM', message: 'the run id is empty' });
    expect(await cli('', 'draft', '1')).toEqual({ code: 2, stderr: 'aqven replay: the run id is empty\n', stdout: '' });
    const long = 'n'.repeat(201);
    expect(await nodeForm('some-run', long, '1')).toEqual({ status: 'error', field: 'form', code: 'E_FORM', message: 'the node id is at most 200 characters' });
    expect(await cli('some-run', long)).toEqual({ code: 2, stderr: 'aqven replay: the node id is at most 200 characters\n', stdout: '' });
    expect(await groupForm('', '0', '1')).toEqual({ status: 'error', field: 'form', code: 'E_FORM', message: 'the failure group is empty' });
  });

  it('a run that is not stored: E_RUN with the same words', async () => {
    const f = await nodeForm('no-such-run', 'draft', '1');
    expect(f).toMatchObject({ status: 'error', field: 'form', code: 'E_RUN' });
    const message = (f as { message: string }).message;
    expect(await cli('no-such-run', 'draft', '1')).toEqual({ code: 2, stderr: `aqven replay: E_RUN ${message}\n`, stdout: '' });
    // without --cap too: the command's replay may have none
    expect(await cli('no-such-run', 'draft')).toEqual({ code: 2, stderr: `aqven replay: E_RUN ${message}\n`, stdout: '' });
  });
});
