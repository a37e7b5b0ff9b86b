// Stored and provider text as the CLI prints it (DESIGN: CLI, "Text from providers"): a provider's
// error, a model's output, a run input can hold ESC, BEL, CR or a bidi override, which a terminal
// would obey — colours, a window title, a line overwritten, text reordered. Every piece of such
// text the CLI prints goes through printable(): those characters are shown as `\u{XXXX}`, the rule
// `aqven check` applies to its messages (lib/project/limits.ts). `--json` output is JSON-escaped
// instead and does not come here.
import { escapeUnprintable } from '@/lib/shared/unprintable';

/**
 * `text` safe to print on a terminal. `block`: a block of text of our own making, which keeps its
 * line breaks and tabs (the text inside it is escaped all the same); else one line, where \n and \t
 * are escaped too.
 */
export function printable(text: string, opts: { block?: boolean } = {}): string {
  return escapeUnprintable(text, opts.block ? (c) => (c === '\n' || c === '\t' ? c : undefined) : undefined);
}
