// The input of `aqven run` (DESIGN: CLI): --input JSON or --input-file, read to at most one byte
// past the run input's size bound (lib/contracts/input-size.ts), never both.
import { closeSync, openSync, readSync } from 'node:fs';
import { inputFileTooLarge, maxInputBytes } from '@/lib/contracts/input-size';
import { startRunRefusal, startRunTextSchema } from '@/lib/contracts/start-run';
import { UsageError } from './usage-error';

/**
 * The flow and the input as the start-a-run contract parses them (lib/contracts/start-run.ts): the
 * input from --input or the file as JSON text, `{}` without either; UsageError in the contract's
 * words, naming the flag or the file.
 */
export function parseRunInput(flow: string, opts: { input?: string; inputFile?: string }): unknown {
  if (opts.input && opts.inputFile) throw new UsageError('give --input or --input-file, not both');
  const [text, where] = opts.inputFile ? [readFileOrThrow(opts.inputFile), opts.inputFile] : [opts.input ?? '{}', '--input'];
  const parsed = startRunTextSchema.safeParse({ flow, input: text });
  if (!parsed.success) throw new UsageError(startRunRefusal(parsed.error, { flow: 'the flow', input: where }).message);
  return parsed.data.input;
}

/**
 * The file's text, read to at most one byte past the run input cap: a bigger file (or /dev/zero, a
 * pipe that never ends) is refused as the cap refuses an input, without holding more of it.
 */
function readFileOrThrow(path: string, limit: number = maxInputBytes()): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(limit + 1);
    let size = 0;
    for (let n; size < buf.length && (n = readSync(fd, buf, size, buf.length - size, null)) > 0;) size += n;
    if (size > limit) {
      throw new UsageError(inputFileTooLarge(path, limit));
    }
    return buf.toString('utf8', 0, size);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read --input-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
