import { describe, expect, it } from 'vitest';
import { replayGroupSchema as replayGroupFormSchema, replayNodeSchema as replayNodeFormSchema } from '@/lib/contracts/replay';
import { replayFormError, suggestedCap } from './replay';

describe('the replay forms', () => {
  it('take a cost cap in USD above 0 and at most $1000, a leading $ allowed', () => {
    const parse = (cap: string) => replayNodeFormSchema.safeParse({ runId: 'r', node: 'draft', cap });
    expect(parse('0.05')).toMatchObject({ success: true, data: { cap: 0.05 } });
    expect(parse(' $2 ')).toMatchObject({ success: true, data: { cap: 2 } });
    for (const bad of ['', '0', '-1', 'abc', '1001']) {
      const r = parse(bad);
      expect(r.success, bad).toBe(false);
      expect(replayFormError(r.error!)).toMatchObject({ status: 'error', field: 'cap' });
    }
  });

  it('a group needs its signature and a since time', () => {
    expect(replayGroupFormSchema.safeParse({ sig: 'abc', since: '1700000000000', cap: '1' })).toMatchObject({ success: true, data: { since: 1700000000000 } });
    const r = replayGroupFormSchema.safeParse({ sig: '', since: '1', cap: '1' });
    expect(replayFormError(r.error!)).toMatchObject({ field: 'form' });
  });

  it('proposes three times the estimate, rounded up to two significant digits, at least a cent', () => {
    expect(suggestedCap(0)).toBe(0.01);
    expect(suggestedCap(0.000106)).toBe(0.01);
    expect(suggestedCap(0.0123)).toBe(0.037);
    expect(suggestedCap(0.5)).toBe(1.5);
    expect(suggestedCap(4)).toBe(12);
  });
});
