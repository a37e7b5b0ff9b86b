import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from './line-diff';

describe('unifiedDiff', () => {
  it('shows one changed field as a hunk with its context', () => {
    const before = 'a: 1\n# keep me\noutput:\n  retries: 3\n  on_error: "fallback"\nz: 9\n';
    const after = 'a: 1\n# keep me\noutput:\n  retries: 2\n  on_error: "fallback"\nz: 9\n';
    expect(unifiedDiff(before, after, { fromFile: 'agents/classifier.yaml' })).toBe(
      ['--- agents/classifier.yaml', '+++ agents/classifier.yaml', '@@ -2,5 +2,5 @@', ' # keep me', ' output:', '-  retries: 3', '+  retries: 2', '   on_error: "fallback"', ' z: 9'].join('\n'),
    );
  });

  it('is empty when nothing changed', () => {
    expect(unifiedDiff('x\ny\n', 'x\ny\n')).toBe('');
  });

  it('keeps far apart changes in separate hunks and counts added and removed lines', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'].join('\n');
    const after = ['1', 'two', '3', '4', '5', '6', '7', '8', '9', '10', '11'].join('\n');
    const d = unifiedDiff(before, after, { context: 1 });
    expect(d.split('\n').filter((l) => l.startsWith('@@'))).toEqual(['@@ -1,3 +1,3 @@', '@@ -10,1 +10,2 @@']);
  });

  it('lists removed lines before the lines that replace them', () => {
    expect(diffLines('a\nb\nc', 'a\nx\ny\nc').map((l) => l.op + l.text)).toEqual([' a', '-b', '+x', '+y', ' c']);
  });
});
