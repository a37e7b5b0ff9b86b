// A line diff of two texts (Myers' algorithm from the `diff` package: O(N·D), so an edit of one
// field of a long file costs little); past MAX_EDIT lines of difference the whole text is shown as
// replaced. Pure and low in the layers, so the run loop (replay's prompt diff) and the dashboard
// (policy revisions, lib/dashboard/line-diff.ts) share it.
import { diffArrays } from 'diff';

export type DiffKind = 'same' | 'add' | 'del';

/** One line of a diff: `oldNo`/`newNo` are its 1-based line numbers in the text before/after (null where it has none). */
export interface DiffLine {
  kind: DiffKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

const MAX_EDIT = 5000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Every line of `before` and `after` in order, each kept (`same`), removed (`del`) or added
 * (`add`); removed lines come before the lines that replace them. Lines compare byte for byte
 * (a CRLF line end counts); `text` is shown without its `\r`.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  const changes = diffArrays(a, b, { maxEditLength: MAX_EDIT }) ?? [
    { value: a, removed: true, added: false, count: a.length },
    { value: b, removed: false, added: true, count: b.length },
  ];
  const out: DiffLine[] = [];
  let o = 1;
  let n = 1;
  for (const c of changes) {
    for (const raw of c.value) {
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (c.removed) out.push({ kind: 'del', text, oldNo: o++, newNo: null });
      else if (c.added) out.push({ kind: 'add', text, oldNo: null, newNo: n++ });
      else out.push({ kind: 'same', text, oldNo: o++, newNo: n++ });
    }
  }
  return out;
}
