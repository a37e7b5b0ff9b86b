import { describe, expect, it } from 'vitest';
import { attemptAnchor, nodeAnchor, readRunAnchor, replayHref, runHref } from './run-anchors';

describe('run page anchors', () => {
  it('reads back the node and attempt it made, node ids with "-" and "_" included', () => {
    expect(readRunAnchor(`#${nodeAnchor('classify')}`)).toEqual({ anchor: 'node-classify', nodeId: 'classify', seq: null });
    expect(readRunAnchor(`#${attemptAnchor('draft-reply-2', 3)}`)).toEqual({ anchor: 'attempt-draft-reply-2-3', nodeId: 'draft-reply-2', seq: 3 });
    expect(readRunAnchor(attemptAnchor('manual_review', 12))).toMatchObject({ nodeId: 'manual_review', seq: 12 });
  });

  it("makes the run page's address, opened on a node or an attempt, and reads its hash back", () => {
    const id = '01a230cc-a4ff-7666-b37f-244df3aec3a9';
    expect(runHref(id)).toBe(`/runs/${id}`);
    expect(runHref(id, { node: 'draft_reply' })).toBe(`/runs/${id}#node-draft_reply`);
    expect(runHref(id, { node: 'draft-2', seq: 3 })).toBe(`/runs/${id}#attempt-draft-2-3`);
    expect(runHref(id, { node: 'draft', seq: null })).toBe(`/runs/${id}#node-draft`);
    expect(runHref('a b/c')).toBe('/runs/a%20b%2Fc');
    expect(readRunAnchor(runHref(id, { node: 'draft-2', seq: 3 }).split('#')[1]!)).toEqual({ anchor: 'attempt-draft-2-3', nodeId: 'draft-2', seq: 3 });
  });

  it("makes a node's replay preview address, the run id and node encoded", () => {
    expect(replayHref('01a2-x', 'draft')).toBe('/runs/01a2-x/replay?node=draft');
    expect(replayHref('a/b', 'n&m=1')).toBe('/runs/a%2Fb/replay?node=n%26m%3D1');
  });

  it('decodes a percent-encoded hash, and points nowhere for any other hash', () => {
    expect(readRunAnchor('#attempt-a%2Db-1')).toMatchObject({ nodeId: 'a-b', seq: 1 });
    for (const h of ['', '#', '#top', '#note-3', '#attempt-x', '#node-', '#node-body-classify', '#%E0%A4%A']) expect(readRunAnchor(h)).toBeNull();
  });
});
