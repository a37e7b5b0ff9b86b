import { describe, expect, it } from 'vitest';
import type { RunListItem } from '@/db/queries';
import { growFirstPage, withLimit } from './run-list-live';

const item = (id: string, startedAt: number) => ({ id, startedAt }) as RunListItem;

describe('the run list’s first page, live', () => {
  it('takes in the runs started since it was drawn and keeps its own rows down to its last one', () => {
    const last = item('r3', 300);
    // a poll with room for new runs reads past the page's end: r2, r1 are the next page's
    const fetched = [item('new-b', 600), item('new-a', 500), item('r5', 400), item('r4', 300), item('r3', 300), item('r2', 200), item('r1', 100)];
    expect(growFirstPage(fetched, last).map((r) => r.id)).toEqual(['new-b', 'new-a', 'r5', 'r4', 'r3']);
    // the last page (no next one) shows every run
    expect(growFirstPage(fetched, null)).toHaveLength(7);
  });

  it('asks for the page’s rows plus room, keeping every filter of the query', () => {
    expect(withLimit('status=failed&limit=20', 70)).toBe('status=failed&limit=70');
    expect(withLimit('', 100)).toBe('limit=100');
  });
});
