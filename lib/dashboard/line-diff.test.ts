import { describe, expect, it } from 'vitest';
import { parseUnifiedDiff, unifiedDiff } from './line-diff';

describe('unifiedDiff', () => {
  it('shows one changed field as a hunk with its context', () => {
    const before = 'a: 1\n# keep me\noutput:\n  retries: 3\n  on_error: "fallback"\nz: 9\n';
    const after = 'a: 1\n# keep me\noutput:\n  retries: 2\n  on_error: "fallback"\nz: 9\n';
    expect(unifiedDiff(before, after, { fromFile: 'agents/classifier.yaml' })).toBe(
      [
        '--- agents/classifier.yaml',
        '+++ agents/classifier.yaml',
        '@@ -2,5 +2,5 @@',
        ' # keep me',
        ' output:',
        '-  retries: 3',
        '+  retries: 2',
        '   on_error: "fallback"',
        ' z: 9',
      ].join('\n'),
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

  it('shows an insertion as added lines only, however long the file around it', () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `  key${i}: value ${i}`);
    const before = lines.join('\n');
    const after = [...lines.slice(0, 1500), 'fallback_models:', '- "x:y"', ...lines.slice(1500)].join('\n');
    expect(unifiedDiff(before, after, { context: 0 })).toBe('@@ -1500,0 +1501,2 @@\n+fallback_models:\n+- "x:y"');
  });
});

describe('parseUnifiedDiff', () => {
  it('reads a stored diff back with the line numbers of the file after the change', () => {
    const before = 'a: 1\n# keep me\noutput:\n  retries: 3\n  on_error: "fallback"\nz: 9\n';
    const after = 'a: 1\n# keep me\noutput:\n  retries: 2\n  strict: true\n  on_error: "fallback"\nz: 9\n';
    const lines = parseUnifiedDiff(unifiedDiff(before, after, { fromFile: 'agents/a.yaml' }));
    expect(lines.map((l) => [l.kind, l.lineNo, l.text])).toEqual([
      ['file', null, '--- agents/a.yaml'],
      ['file', null, '+++ agents/a.yaml'],
      ['hunk', null, '@@ -2,5 +2,6 @@'],
      ['same', 2, '# keep me'],
      ['same', 3, 'output:'],
      ['del', 4, '  retries: 3'],
      ['add', 4, '  retries: 2'],
      ['add', 5, '  strict: true'],
      ['same', 6, '  on_error: "fallback"'],
      ['same', 7, 'z: 9'],
    ]);
  });

  it('takes a removed line that starts with dashes as a removed line, not a file name', () => {
    const lines = parseUnifiedDiff(unifiedDiff('a\n-- b\nc\n', 'a\nc\n', { fromFile: 'f' }));
    expect(lines.filter((l) => l.kind === 'del').map((l) => l.text)).toEqual(['-- b']);
  });
});
