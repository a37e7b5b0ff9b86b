// Reads one project file for the loader: a file over LIMITS.fileBytes is not read at all, and a
// file that is not UTF-8 is answered with the position of its first bad byte (decoding it would
// silently turn that byte into U+FFFD). Either way a diagnostic, never an exception.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostic } from './diagnostics';
import { sizeDiagnostic } from './parse-file';

/**
 * The text of `file` (relative to `root`), or the diagnostic that says why there is none. Only a
 * missing file throws (ENOENT, as readFile did): the caller knows what a missing file means.
 */
export async function readProjectText(root: string, file: string): Promise<string | Diagnostic> {
  const path = join(root, file);
  let bytes: Buffer;
  try {
    const info = await stat(path);
    const tooBig = sizeDiagnostic(file, info.size);
    if (tooBig) return tooBig;
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    const why = err instanceof Error ? err.message : String(err);
    return {
      file,
      line: 1,
      col: 1,
      severity: 'error',
      code: 'E_FIELD',
      message: `the file cannot be read: ${why}`,
      hint: 'check the permissions of the file (aqven reads it as the current user)',
      path: [],
    };
  }
  const bad = firstInvalidUtf8(bytes);
  if (bad < 0) return bytes.toString('utf8');
  const lineStart = bytes.lastIndexOf(0x0a, bad - 1) + 1;
  const line = countLines(bytes, lineStart) + 1;
  const col = bytes.subarray(lineStart, bad).toString('utf8').length + 1;
  return {
    file,
    line,
    col,
    severity: 'error',
    code: 'E_FIELD',
    message: `the file is not UTF-8: byte 0x${bytes[bad].toString(16).toUpperCase().padStart(2, '0')} at offset ${bad} does not start a UTF-8 character`,
    hint: 'save the file as UTF-8',
    path: [],
  };
}

function countLines(bytes: Uint8Array, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) n++;
  return n;
}

/** Offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    // lead byte → continuation count, and the range of the first continuation (no overlongs,
    // no surrogates, nothing past U+10FFFF)
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + n >= b.length) return i; // cut off at the end of the file
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (let k = 2; k <= n; k++) if ((b[i + k] & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}
