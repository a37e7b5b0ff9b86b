import { describe, expect, it } from 'vitest';
import { attemptAnchor, nodeAnchor, readRunAnchor } from './run-anchors';

describe('run page anchors', () => {
  it('reads back the node and attempt it made, node ids with "-" and "_" included', () => {
    expect(readRunAnchor(`#${nodeAnchor('classify')}`)).toEqual({ anchor: 'node-classify', nodeId: 'classify', seq: null });
    expect(readRunAnchor(`#${attemptAnchor('draft-reply-2', 3)}`)).toEqual({ anchor: 'attempt-draft-reply-2-3', nodeId: 'draft-reply-2', seq: 3 });
    expect(readRunAnchor(attemptAnchor('manual_review', 12))).toMatchObject({ nodeId: 'manual_review', seq: 12 });
  });

  it('decodes a percent-encoded hash, and points nowhere for any other hash', () => {
    expect(readRunAnchor('#attempt-a%2Db-1')).toMatchObject({ nodeId: 'a-b', seq: 1 });
    for (const h of ['', '#', '#top', '#note-3', '#attempt-x', '#node-', '#node-body-classify', '#%E0%A4%A']) expect(readRunAnchor(h)).toBeNull();
  });
});
