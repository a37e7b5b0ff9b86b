// Characters a terminal would obey or a reader would not see — C0/C1 controls and DEL, bidi
// overrides and isolates, zero-width and other invisible format characters, line and paragraph
// separators, lone surrogates — shown as `\u{XXXX}`, so printed text can neither hide text nor
// drive the terminal (colours, a window title, a line overwritten). One rule for `aqven check`'s
// messages (lib/project/limits.ts) and for the provider and stored text the CLI prints
// (lib/cli/printable.ts).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

const shown = (c: string) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`;

/** `text` with every such character shown as `\u{XXXX}`; `instead` may put something else for one (a line break kept, a space). */
export function escapeUnprintable(text: string, instead?: (c: string) => string | undefined): string {
  return text.replace(UNPRINTABLE, (c) => instead?.(c) ?? shown(c));
}
