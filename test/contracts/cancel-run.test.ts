// The cancel-a-run contract (lib/contracts/cancel-run.ts) at its two doors: the run page's "Cancel
// run" action and `aqven cancel RUN` (in-process, through its CliIo). A run id that is empty or too
// long is refused at both with the same words, before any database is asked: the form with E_RUN,
// the command with exit 2 (bad usage) — in SQLite mode too, where the command otherwise says that
// nothing is queued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '@/lib/cli/io';
import { NOTHING_QUEUED } from '@/lib/flow/run-mode';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();

const form = async (runId: string) => {
  return (await import('@/lib/actions/cancel-run')).cancelRunAction({ status: 'idle' }, formData({ runId }));
};
const cli = async (runId: string) => {
  const io = captureIo();
  const code = await (await import('@/lib/cli/queue')).runCancelCommand(runId, {}, io);
  return { code, stderr: io.stderr, stdout: io.stdout };
};

beforeAll(async () => {
  await dashboard.open();
}, 90_000);

afterAll(() => dashboard.close());

describe('cancel a run: the same refusal at both doors', () => {
  it.each([
    ['', 'the run id is empty'],
    ['r'.repeat(201), 'the run id is at most 200 characters'],
  ])('run id %j', async (runId, words) => {
    expect(await form(runId)).toEqual({ status: 'error', code: 'E_RUN', message: words });
    expect(await cli(runId)).toEqual({ code: 2, stderr: `aqven cancel: ${words}\n`, stdout: '' });
  });

  it('a well-formed id goes on to where the run is cancelled (SQLite mode: nothing is queued, at both)', async () => {
    expect(await form('some-run')).toEqual({ status: 'error', code: 'E_NOT_QUEUED', message: NOTHING_QUEUED });
    expect(await cli('some-run')).toEqual({ code: 1, stderr: `aqven cancel: ${NOTHING_QUEUED} (set AQVEN_DATABASE_URL=postgres://… to queue runs)\n`, stdout: '' });
  });

  it('an AQVEN_DATABASE_URL naming no database is bad configuration at the command: one line, exit 2', async () => {
    const io = captureIo();
    const code = await (await import('@/lib/cli/queue')).runCancelCommand('some-run', { AQVEN_DATABASE_URL: 'mysql://user:pw-9@db/aqven' }, io);
    expect({ code, stdout: io.stdout }).toEqual({ code: 2, stdout: '' });
    expect(io.stderr).toMatch(/^aqven cancel: AQVEN_DATABASE_URL is a mysql:\/\/ URL; .*\n$/);
  });
});
