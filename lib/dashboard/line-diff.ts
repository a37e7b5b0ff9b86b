// Line diffs for the dashboard: the policy revisions' stored unified diff (DESIGN: "Storage"
// `policy_revisions.diff`), written at save time and read back for display. The line diff itself
// is lib/shared/line-diff.ts (lineDiff), re-exported here.
import { lineDiff, type DiffKind } from '@/lib/shared/line-diff';

export { lineDiff, type DiffKind, type DiffLine } from '@/lib/shared/line-diff';

const OP: Record<DiffKind, string> = { same: ' ', add: '+', del: '-' };

/** Unified text: `@@ -l,n +l,n @@` hunks with `context` lines around each change; '' when nothing changed. */
export function unifiedDiff(before: string, after: string, opts: { context?: number; fromFile?: string; toFile?: string } = {}): string {
  const context = opts.context ?? 2;
  const lines = lineDiff(before, after);
  const changed = lines.map((l, i) => (l.kind === 'same' ? -1 : i)).filter((i) => i >= 0);
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
  // where each diff line stands in the old and the new text (a line one side lacks: the next one's place)
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let n = 1;
  for (const l of lines) {
    oldAt.push(o);
    newAt.push(n);
    if (l.kind !== 'add') o++;
    if (l.kind !== 'del') n++;
  }
  const out: string[] = [];
  if (opts.fromFile || opts.toFile) out.push(`--- ${opts.fromFile ?? opts.toFile}`, `+++ ${opts.toFile ?? opts.fromFile}`);
  for (const [lo, hi] of ranges) {
    const hunk = lines.slice(lo, hi + 1);
    const oldCount = hunk.filter((l) => l.kind !== 'add').length;
    const newCount = hunk.filter((l) => l.kind !== 'del').length;
    const oldStart = oldCount ? oldAt[lo]! : oldAt[lo]! - 1;
    const newStart = newCount ? newAt[lo]! : newAt[lo]! - 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const l of hunk) out.push(`${OP[l.kind]}${l.text}`);
  }
  return out.join('\n');
}

/** One line of a stored unified diff, read back for display. */
export interface UnifiedLine {
  kind: DiffKind | 'hunk' | 'file';
  text: string;
  /** the line's number in the file after the change (before it, for a removed line) */
  lineNo: number | null;
}

/** Reads unifiedDiff's text back into lines with their numbers (the `@@` headers give them). */
export function parseUnifiedDiff(diff: string): UnifiedLine[] {
  if (!diff) return [];
  const out: UnifiedLine[] = [];
  let o = 0;
  let n = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      inHunk = true;
      o = Number(hunk[1]) || 1;
      n = Number(hunk[2]) || 1;
      out.push({ kind: 'hunk', text: line, lineNo: null });
    } else if (!inHunk)
      out.push({ kind: 'file', text: line, lineNo: null }); // `--- file`, `+++ file`
    else if (line.startsWith('+')) out.push({ kind: 'add', text: line.slice(1), lineNo: n++ });
    else if (line.startsWith('-')) out.push({ kind: 'del', text: line.slice(1), lineNo: o++ });
    else {
      out.push({ kind: 'same', text: line.slice(1), lineNo: n++ });
      o++;
    }
  }
  return out;
}
