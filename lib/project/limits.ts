// The sizes `aqven check` accepts (DESIGN: CLI, "Limits"): every project file is bounded before
// the work on it grows with it, so a hostile or broken file is answered with a positioned
// diagnostic (E_LIMIT) in well under a second instead of a crash or a hang. Past the per-file cap
// of diagnostics, the rest are counted in one E_MORE diagnostic.
import { escapeUnprintable } from '@/lib/shared/unprintable';

export const LIMITS = {
  /** bytes of one project file; a larger file is not parsed */
  fileBytes: 128 * 1024,
  /** mappings and lists inside each other (the top-level mapping is level 1) */
  depth: 64,
  /** alias nodes (`*name`) in one file */
  aliases: 100,
  /** values the aliases of one file stand for, counted as if each alias were a copy */
  aliasValues: 10_000,
  /** nodes of one flow */
  flowNodes: 500,
  /** errors listed per file; the rest are counted in one E_MORE diagnostic */
  diagnosticsPerFile: 100,
  /** characters of a message or hint (user text quoted in them is clipped first, to `quoted`) */
  messageChars: 500,
  quoted: 80,
  /** names listed in a hint ("use one of: …") */
  listedNames: 10,
} as const;

/** 1048576 → "1 MiB", 65536 → "64 KiB". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/** Text from a project file as it may appear inside a message: escaped and at most `max` characters. */
export function quote(text: string, max: number = LIMITS.quoted): string {
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  return escapeUnprintable(clipped);
}

/** A whole message or hint, made safe to print: invisible characters escaped, length capped. */
export function printable(text: string, max: number = LIMITS.messageChars): string {
  // newlines would break the one-line format; a hint's own text never has one
  const escaped = escapeUnprintable(text, (c) => (c === '\n' ? ' ' : undefined));
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}

/** "a, b, c" of at most LIMITS.listedNames names, then "… (N more)". */
export function listNames(names: readonly string[], max: number = LIMITS.listedNames): string {
  const shown = names.slice(0, max).map((n) => quote(n, 40));
  return names.length > max ? `${shown.join(', ')}, … (${names.length - max} more)` : shown.join(', ');
}
