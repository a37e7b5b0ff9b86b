import { describe, expect, it } from 'vitest';
import { runIdPrefix, shortRunId } from './short-id';

describe('short run ids', () => {
  it('shows the first 8 characters of a run id, and a short id whole', () => {
    expect(shortRunId('3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b')).toBe('3f2a9c1e');
    expect(shortRunId('r1')).toBe('r1');
  });

  it('takes hex digits and dashes, at least 4, as a prefix to look up, lowercased', () => {
    expect(runIdPrefix('3F2A9C1E')).toBe('3f2a9c1e');
    expect(runIdPrefix(' 3f2a ')).toBe('3f2a');
    expect(runIdPrefix('3f2a9c1e-5b7d')).toBe('3f2a9c1e-5b7d');
    for (const no of ['3f2', '', 'refund', '3f2a%', '3f2a_', '-3f2a', '3f2a 9c1e', 'x'.repeat(40), '0'.repeat(37)]) expect(runIdPrefix(no), no).toBeNull();
  });
});
