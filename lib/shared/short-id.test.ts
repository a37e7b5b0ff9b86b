import { describe, expect, it } from 'vitest';
import { isRunIdTailPrefix, runIdPrefix, shortRunId, shortRunIdSpan } from './short-id';

describe('short run ids', () => {
  it("shows the first 8 characters of a UUID's last group, its random part, in v7 and v4 ids alike", () => {
    // v7: the first 12 digits are the time, the same for every run made in the same ~65 s
    expect(shortRunId('019ad3f2-9c1e-7b7d-8e8f-9a0b1c2d3e4f')).toBe('9a0b1c2d');
    expect(shortRunId('3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b')).toBe('1c2d3e4f');
    expect(shortRunId('3F2A9C1E-5B7D-4E8F-9A0B-1C2D3E4F5A6B')).toBe('1C2D3E4F');
    expect(shortRunIdSpan('3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b')).toEqual([24, 32]);
  });

  it('shows any other id by its first 8 characters, and a short one whole', () => {
    expect(shortRunId('r1')).toBe('r1');
    expect(shortRunId('run-0001-extra')).toBe('run-0001');
    // 36 characters but not a UUID's groups
    expect(shortRunId('3f2a9c1e5b7d4e8f9a0b1c2d3e4f5a6b-abc')).toBe('3f2a9c1e');
    expect(shortRunIdSpan('r1')).toEqual([0, 2]);
  });

  it('takes hex digits and dashes, at least 4, as a prefix to look up, lowercased', () => {
    expect(runIdPrefix('3F2A9C1E')).toBe('3f2a9c1e');
    expect(runIdPrefix(' 3f2a ')).toBe('3f2a');
    expect(runIdPrefix('3f2a9c1e-5b7d')).toBe('3f2a9c1e-5b7d');
    for (const no of ['3f2', '', 'refund', '3f2a%', '3f2a_', '-3f2a', '3f2a 9c1e', 'x'.repeat(40), '0'.repeat(37)]) expect(runIdPrefix(no), no).toBeNull();
  });

  it('looks a prefix up in the last group too when it could be one: 4 to 12 hex digits', () => {
    for (const yes of ['1c2d', '1c2d3e4f', '1c2d3e4f5a6b']) expect(isRunIdTailPrefix(yes), yes).toBe(true);
    for (const no of ['1c2d3e4f5a6b7', '3f2a9c1e-5b7d', '1c2d-']) expect(isRunIdTailPrefix(no), no).toBe(false);
  });
});
