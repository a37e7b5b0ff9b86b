// A unified-style line diff for policy revisions (DESIGN: "Storage" `policy_revisions.diff`): hunks
// with a few lines of context, `-` removed, `+` added. Agent files are small, so a plain LCS
// table is enough; past a size cap the whole file is shown as replaced.

export type DiffLine = { op: ' ' | '-' | '+'; text: string };

const MAX_CELLS = 4_000_000;

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // common head and tail first: an edit of one field leaves almost every line alone
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  out.push(...lcsDiff(midA, midB));
  out.push(...a.slice(a.length - tail).map((text): DiffLine => ({ op: ' ', text })));
  return out;
}

function lcsDiff(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > MAX_CELLS) {
    return [...a.map((text): DiffLine => ({ op: '-', text })), ...b.map((text): DiffLine => ({ op: '+', text }))];
  }
  const w = b.length + 1;
  const len = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      len[i * w + j] = a[i] === b[j] ? len[(i + 1) * w + j + 1]! + 1 : Math.max(len[(i + 1) * w + j]!, len[i * w + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: ' ', text: a[i]! });
      i++;
      j++;
    } else if (len[(i + 1) * w + j]! >= len[i * w + j + 1]!) out.push({ op: '-', text: a[i++]! });
    else out.push({ op: '+', text: b[j++]! });
  }
  while (i < a.length) out.push({ op: '-', text: a[i++]! });
  while (j < b.length) out.push({ op: '+', text: b[j++]! });
  return out;
}

/** Unified-ish text: `@@ -l,n +l,n @@` hunks with `context` lines around each change. */
export function unifiedDiff(before: string, after: string, opts: { context?: number; fromFile?: string; toFile?: string } = {}): string {
  const context = opts.context ?? 2;
  const lines = diffLines(before, after);
  const changed = lines.map((l, i) => (l.op === ' ' ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return '';
  // merge change positions into hunks whose contexts touch
  const ranges: [number, number][] = [];
  for (const i of changed) {
    const lo = Math.max(0, i - context);
    const hi = Math.min(lines.length - 1, i + context);
    const last = ranges[ranges.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else ranges.push([lo, hi]);
  }
  // line numbers of each diff line in the old and the new text
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 1;
  let n = 1;
  for (const l of lines) {
    oldNo.push(o);
    newNo.push(n);
    if (l.op !== '+') o++;
    if (l.op !== '-') n++;
  }
  const out: string[] = [];
  if (opts.fromFile || opts.toFile) out.push(`--- ${opts.fromFile ?? opts.toFile}`, `+++ ${opts.toFile ?? opts.fromFile}`);
  for (const [lo, hi] of ranges) {
    const hunk = lines.slice(lo, hi + 1);
    const oldCount = hunk.filter((l) => l.op !== '+').length;
    const newCount = hunk.filter((l) => l.op !== '-').length;
    const oldStart = oldCount ? oldNo[lo]! : oldNo[lo]! - 1;
    const newStart = newCount ? newNo[lo]! : newNo[lo]! - 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const l of hunk) out.push(`${l.op}${l.text}`);
  }
  return out.join('\n');
}
