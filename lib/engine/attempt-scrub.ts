// What an attempt keeps out of storage (DESIGN: Redaction, Streaming): the provider's API key,
// read at call time and never stored, scrubbed with the five detectors from every text we keep,
// and a streamed try's deltas redacted in batches before they are written.
import { capFailureText, createStreamRedactor, redact, redactText, STREAM_HOLD_CHARS, type StreamRedactor } from '@/lib/redact';
import { KEY_MARK, scrubSecret, type ScrubOptions } from './secrets';
import type { Clock, EngineEvent, ResolvedProvider } from './types';

/**
 * A streamed try is redacted for storage in batches (DESIGN: Streaming): once this many characters
 * wait beyond the held-back tail, or once this long has passed since the last batch (by the
 * injected clock), whichever comes first. A batch costs a scan of the tail again, so not per token.
 */
export const STREAM_SCAN_CHARS = 4096;
export const STREAM_SCAN_MS = 100;

export type Scrub = (text: string, opts?: ScrubOptions) => string;

/** The key of the attempt's provider, read at call time and never stored, and every key to scrub. */
export function attemptKeys(
  link: { provider: Pick<ResolvedProvider, 'apiKeyEnv'> },
  env: Record<string, string | undefined>,
): { apiKey: string | undefined; keys: (string | undefined)[] } {
  const name = link.provider.apiKeyEnv;
  const apiKey = name && Object.hasOwn(env, name) ? env[name] : undefined; // never Object.prototype's "constructor"
  // the key the process's environment holds is scrubbed too when the call sends another (a
  // simulated run sends a placeholder): whatever echoes it back, it is never stored either
  const ownKey = name && Object.hasOwn(process.env, name) ? process.env[name] : undefined;
  return { apiKey, keys: ownKey !== undefined && ownKey !== apiKey ? [apiKey, ownKey] : [apiKey] };
}

/**
 * No API key in anything we store or show (DESIGN: Redaction), whatever a provider echoes back:
 * the key is scrubbed from the whole text first (a detector could otherwise rewrite part of it,
 * say its digits as a <PHONE>, and hide the rest from the key scrub), then the text is redacted,
 * then cut (secrets.ts), and never longer than FAILURE_TEXT_MAX_CHARS.
 */
export function scrubberOf(keys: (string | undefined)[], full: { extraPatterns?: RegExp[] } | undefined): Scrub {
  return (text: string, opts: ScrubOptions = {}): string => {
    const keyless = scrubSecret(text, keys, { cut: opts.cut });
    const redacted = opts.secretsOnly ? keyless : full ? redactText(keyless, full) : redact(keyless);
    return capFailureText(opts.max === undefined ? redacted : scrubSecret(redacted, keys, { max: opts.max }));
  };
}

/**
 * Streamed text that may become failure text is never stored raw (DESIGN: Streaming): each try's
 * deltas go through a stream redactor (the API key, then the five detectors, a tail held back),
 * and each delta carries, as `stored`, what of it can be written.
 */
export function deltaRecorder(o: { clock: Clock; emit: (e: EngineEvent) => Promise<void>; nodeId: string; seq: number; keys: (string | undefined)[] }) {
  let live: { tryNo: number; redactor: StreamRedactor; scannedAt: number } | null = null;
  return (tryNo: number, text: string): Promise<void> => {
    if (live?.tryNo !== tryNo) {
      const secrets = o.keys.filter((k): k is string => k !== undefined && k.length >= 4).map((value) => ({ value, placeholder: KEY_MARK }));
      live = { tryNo, redactor: createStreamRedactor({ secrets }), scannedAt: o.clock.now() };
    }
    const red = live.redactor;
    red.push(text);
    let stored = '';
    if (red.pending >= STREAM_HOLD_CHARS + STREAM_SCAN_CHARS || (red.pending > STREAM_HOLD_CHARS && o.clock.now() - live.scannedAt >= STREAM_SCAN_MS)) {
      stored = red.take();
      live.scannedAt = o.clock.now();
    }
    return o.emit({ type: 'delta', nodeId: o.nodeId, seq: o.seq, tryNo, text, stored });
  };
}
