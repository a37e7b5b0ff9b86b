// The limits probe's report seam (probe-report.ts): a level's trials counted into its figures, and the run
// row's end — interrupted wins over a failure, a failure over a spent budget, else succeeded.
import { describe, expect, it } from 'vitest';
import { BUDGET_CODE } from '@/lib/shared/spend-budget';
import { runEnding, stopMessage, tallyLevel } from './probe-report';
import { SpendStop, type Trial } from './probe-trial';
import type { LimitsProbeOptions } from './probe-types';

const usage = { inputTokens: 1, outputTokens: 1, costUsd: 0 };
const trial = (kind: Trial['kind'], firstTryValid: boolean, afterRepairValid: boolean, correct = false, calls = 1): Trial => ({
  kind,
  firstTryValid,
  afterRepairValid,
  correct,
  calls,
  usage,
});

describe('tallyLevel', () => {
  it('counts answered trials by validity, truncated and errored apart, and every call', () => {
    const spent = [trial('answered', true, true, true), trial('answered', false, true, false, 2), trial('truncated', false, false), trial('error', false, false)];
    expect(tallyLevel('enum', 8, 4, spent)).toEqual({ level: 8, trials: 4, firstTryValid: 1, afterRepairValid: 2, truncated: 1, errors: 1, calls: 5, correct: 1 });
  });

  it('keeps no right-answer count outside the enum dimension', () => {
    expect(tallyLevel('depth', 4, 1, [trial('answered', true, true, true)])).not.toHaveProperty('correct');
  });
});

describe('runEnding', () => {
  const spend = new SpendStop({ message: 'budget spent', hint: 'wait for tomorrow' });

  it('succeeds when nothing stopped it or only a budget of the run did', () => {
    expect(runEnding(null, null, null)).toEqual({ status: 'succeeded', error: null });
    expect(runEnding({ reason: 'max_calls', message: 'stopped at the call budget' }, null, null)).toEqual({ status: 'succeeded', error: null });
  });

  it('fails with limits_error on a failure, before the spend budget', () => {
    const end = runEnding({ reason: 'error', message: 'disk full' }, new Error('disk full'), spend);
    expect(end.status).toBe('failed');
    expect(end.error).toMatchObject({ code: 'limits_error', message: 'disk full' });
  });

  it('fails with the budget code when the caller spent the budget', () => {
    expect(runEnding({ reason: 'spend_budget', message: 'budget spent' }, null, spend)).toEqual({
      status: 'failed',
      error: { code: BUDGET_CODE, node: null, message: 'budget spent', hint: 'wait for tomorrow — see: aqven explain E_BUDGET' },
    });
  });

  it('is interrupted when stopped, whatever else happened', () => {
    const end = runEnding({ reason: 'interrupted', message: 'stopped' }, new Error('x'), spend);
    expect(end.status).toBe('interrupted');
    expect(end.error).toMatchObject({ code: 'interrupted', message: 'the limits run was stopped' });
  });
});

describe('stopMessage', () => {
  const o = { maxCalls: 10, maxCostUsd: 0.5 } as LimitsProbeOptions;
  it('names the budget that stopped it, else the stop reason', () => {
    expect(stopMessage('max_calls', o, null)).toBe('stopped at the call budget (--max-calls 10): one more trial could take 2 calls');
    expect(stopMessage('max_cost', o, null)).toBe('stopped at the cost budget (--max-cost 0.5)');
    expect(stopMessage('interrupted', o, new Error('Ctrl-C'))).toBe('Ctrl-C');
    expect(stopMessage('interrupted', o, 'x')).toBe('stopped');
  });
});
