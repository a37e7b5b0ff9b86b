// Runs named and found on the command line (DESIGN: CLI): by their id or a prefix of it (`aqven
// show`, `aqven cancel`: a unique prefix stands for the run; an ambiguous one lists the runs it
// names — exit 2, bad usage: give more of the id — never picks one), and by words (`aqven search`).
import { resolveRunId, type RunIdMatch } from '@/db/run-id-queries';
import type { SearchPage } from '@/db/search-queries';
import type { Db } from '@/db/types';
import { ambiguousRunIdWords, shortRunId } from '@/lib/shared/short-id';
import { printable } from './printable';

/** the full id `idOrPrefix` names, or what to print and the exit status when it names none or several */
export type CliRunId = { ok: true; id: string } | { ok: false; exitCode: 1 | 2; message: string };

export async function cliRunId(db: Db, command: string, idOrPrefix: string): Promise<CliRunId> {
  const r = await resolveRunId(db, idOrPrefix);
  if (r.kind === 'found') return { ok: true, id: r.id };
  if (r.kind === 'none') return { ok: false, exitCode: 1, message: `aqven ${command}: no run with id ${idOrPrefix}` };
  return { ok: false, exitCode: 2, message: formatAmbiguous(command, idOrPrefix, r.matches, r.more) };
}

/** `aqven show: "abcd" names 2 runs (by the start of their id or of their short id); give more of it:` and one line per run */
export function formatAmbiguous(command: string, prefix: string, matches: RunIdMatch[], more: boolean): string {
  const lines = matches.map((m) => `  ${m.id}  ${m.flow.padEnd(14)} ${m.status.padEnd(11)} ${new Date(m.startedAt).toISOString()}`);
  if (more) lines.push('  … and more');
  return printable([`aqven ${command}: "${prefix}" ${ambiguousRunIdWords(matches.length, more)}; give more of it:`, ...lines].join('\n'), { block: true });
}

/**
 * A page of `aqven search`: a line per hit — short id, flow, status, where the words are, start —
 * then its snippet with the words [marked]; the next page's `--before` when there is one.
 */
export function formatSearchPage(page: SearchPage): string {
  if (!page.words.length && !page.hits.length) return 'nothing to search for: give words, or 4 or more characters of a run id';
  if (!page.hits.length) return 'no run input, node output or failure text holds every one of these words';
  const lines = page.hits.flatMap((h) => {
    const where = h.field === 'id' ? 'run id' : h.nodeId ? `${h.field} of ${h.nodeId}${h.attemptSeq !== null ? ` #${h.attemptSeq}` : ''}` : h.field;
    // one line: the stored text's own breaks and tabs as spaces, its other control characters escaped
    const text = printable(
      h.snippet
        .map((p) => (p.hit ? `[${p.text}]` : p.text))
        .join('')
        .replace(/[\n\t]/g, ' '),
    );
    return [`${shortRunId(h.runId)}  ${h.flow.padEnd(14)} ${h.status.padEnd(11)} ${where.padEnd(20)} ${new Date(h.startedAt).toISOString()}`, `    ${text}`];
  });
  if (page.nextBefore !== null) lines.push(`older text: --before ${page.nextBefore}`);
  return printable(lines.join('\n'), { block: true });
}
