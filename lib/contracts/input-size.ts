// The size of a run input (DESIGN: Storage, "A run's input is bounded before it is stored"): its
// bound, how it is measured and how a refusal reads — for every way a run starts (POST /api/runs,
// the /flows form, `aqven run --input/--input-file`, `aqven run --queue`), checked by the run loop's
// validateRunInput before anything is stored, and by the CLI while it reads a file.
import { formatBytes } from '@/lib/project/limits';

type Env = Readonly<Record<string, string | undefined>>;

/** the refusal code of a run input the run cannot take: too large, or not matching the flow's input schema */
export const INPUT_CODE = 'E_INPUT';

/** The largest run input stored, as JSON text in UTF-8, unless AQVEN_MAX_INPUT_BYTES says otherwise. */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024;

/** AQVEN_MAX_INPUT_BYTES: a positive whole number of bytes; anything else (unset, "1mb", 0) keeps the default. */
export function maxInputBytes(env: Env = process.env): number {
  const raw = env.AQVEN_MAX_INPUT_BYTES?.trim();
  if (!raw || !/^\d+$/.test(raw)) return DEFAULT_MAX_INPUT_BYTES;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_MAX_INPUT_BYTES;
}

/** The size of an input as it is stored: its JSON text in UTF-8 bytes. */
export function inputBytes(input: unknown): number {
  return new TextEncoder().encode(JSON.stringify(input) ?? '').byteLength;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The refusal of an input over `limit` bytes; `what` says what was measured, as the door read it:
 * `input is 300,000 bytes as JSON` (the run loop), `--input-file F is more than 4,096 bytes` (the CLI).
 */
export function inputTooLarge(what: string, limit: number): string {
  return `${what}; a run input may be at most ${count(limit)} bytes (${formatBytes(limit)}, AQVEN_MAX_INPUT_BYTES) — nothing was stored`;
}

/** The refusal of `input` when it is over `limit` bytes; null when it fits (an Infinity limit: an input stored already). */
export function inputSizeRefusal(input: unknown, limit: number): string | null {
  if (!Number.isFinite(limit)) return null;
  const bytes = inputBytes(input);
  return bytes > limit ? inputTooLarge(`input is ${count(bytes)} bytes as JSON`, limit) : null;
}

/** The refusal of a file found to hold more than `limit` bytes while it is read (it is not read further). */
export function inputFileTooLarge(path: string, limit: number): string {
  return inputTooLarge(`--input-file ${path} is more than ${count(limit)} bytes`, limit);
}
