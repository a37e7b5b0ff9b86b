import { describe, expect, it } from 'vitest';
import { linkAbort } from './abort-link';

describe('the hand-written abort link (abort-link.ts)', () => {
  it("aborts with the outer signal's reason, at once when it is already aborted", () => {
    const outer = new AbortController();
    const { ac } = linkAbort(outer.signal);
    outer.abort('why');
    expect(ac.signal.reason).toBe('why');
    expect(linkAbort(outer.signal).ac.signal.reason).toBe('why');
  });

  it('unlink takes its listener off the outer signal: a later abort no longer reaches it', () => {
    const outer = new AbortController();
    const { ac, unlink } = linkAbort(outer.signal);
    unlink();
    outer.abort('late');
    expect(ac.signal.aborted).toBe(false);
  });
});
