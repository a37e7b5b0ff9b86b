import { describe, expect, it } from 'vitest';
import { lineDiff } from './line-diff';

describe('lineDiff', () => {
  it('lists removed lines before the lines that replace them, with their line numbers', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\ny\nc')).toEqual([
      { kind: 'same', text: 'a', oldNo: 1, newNo: 1 },
      { kind: 'del', text: 'b', oldNo: 2, newNo: null },
      { kind: 'add', text: 'x', oldNo: null, newNo: 2 },
      { kind: 'add', text: 'y', oldNo: null, newNo: 3 },
      { kind: 'same', text: 'c', oldNo: 3, newNo: 4 },
    ]);
  });

  it('keeps each line as written: leading spaces, and CRLF ends compared but not shown', () => {
    const d = lineDiff('x:\r\n    deep: 1\r\n', 'x:\r\n    deep: 2\r\n');
    expect(d.map((l) => [l.kind, l.text])).toEqual([
      ['same', 'x:'],
      ['del', '    deep: 1'],
      ['add', '    deep: 2'],
    ]);
  });

  it('shows two texts with nothing in common as all removed, then all added', () => {
    const d = lineDiff('a\nb', 'c\nd');
    expect(d.map((l) => l.kind)).toEqual(['del', 'del', 'add', 'add']);
  });
});
