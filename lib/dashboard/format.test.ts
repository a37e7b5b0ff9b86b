// The dashboard's number formats (components/ui/format.ts; vitest collects tests under lib/, db/
// and test/ only, so this one sits with the view models it serves).
import { describe, expect, it } from 'vitest';
import { fmtCost } from '@/components/ui/format';

describe('fmtCost: one rule for every cost', () => {
  it('shows three significant digits, zeros kept, so costs side by side read alike', () => {
    expect([0.0000412, 0.00026, 0.000387, 0.00132, 0.0421, 0.5].map(fmtCost)).toEqual(['$0.0000412', '$0.000260', '$0.000387', '$0.00132', '$0.0421', '$0.500']);
  });

  it('is never less precise than a cent, with thousands separated', () => {
    expect([1, 12.5, 1234.567].map(fmtCost)).toEqual(['$1.00', '$12.50', '$1,234.57']);
  });

  it('says nothing was spent, or nothing is known, plainly; a nano-dollar is as fine as it gets', () => {
    expect([0, null, undefined, 1e-9].map(fmtCost)).toEqual(['$0', '—', '—', '$0.000000001']);
  });
});
