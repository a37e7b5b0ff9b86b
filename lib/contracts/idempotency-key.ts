// `Idempotency-Key` on `POST /api/runs` (DESIGN: The dashboard, "Calling AQVEN from a service";
// the IETF httpapi draft "The Idempotency-Key HTTP Header Field"): the same caller, key and body
// within IDEMPOTENCY_TTL_MS get the same run and start nothing; the same key with another body is
// refused (422). What a key may be, how "the same body" is decided, and the refusals' codes live
// here; the keys are stored per caller (db/idempotency-queries.ts) and claimed by a unique index.
/** how long a key names its run: a retry a day later starts a new one */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** a key's length in characters: a UUID is 36 */
export const IDEMPOTENCY_KEY_MAX = 255;
/** a key that is empty, too long, or not printable ASCII */
export const KEY_CODE = 'E_IDEMPOTENCY_KEY';
/** the key was used with another body (422) */
export const KEY_REUSED_CODE = 'E_IDEMPOTENCY_KEY_REUSED';
/** the first request with this key is still starting its run (409, Retry-After) */
export const KEY_IN_FLIGHT_CODE = 'E_IDEMPOTENCY_IN_FLIGHT';

export type KeyRead = { ok: true; key: string | null } | { ok: false; code: typeof KEY_CODE; message: string };

/**
 * The header's key: null when absent. The draft sends it as a Structured Field string
 * (`"8e03978e-…"`); a bare token, as payment APIs take it, is read the same.
 */
export function idempotencyKey(header: string | null): KeyRead {
  if (header === null) return { ok: true, key: null };
  const raw = header.trim();
  const key = /^"(.*)"$/.test(raw) ? raw.slice(1, -1).replace(/\\(["\\])/g, '$1') : raw;
  if (key.length === 0) return { ok: false, code: KEY_CODE, message: 'Idempotency-Key is empty: send a unique value per operation, e.g. a UUID' };
  if (key.length > IDEMPOTENCY_KEY_MAX) return { ok: false, code: KEY_CODE, message: `Idempotency-Key is at most ${IDEMPOTENCY_KEY_MAX} characters, got ${key.length}` };
  if (!/^[\x20-\x7e]+$/.test(key)) return { ok: false, code: KEY_CODE, message: 'Idempotency-Key must be printable ASCII' };
  return { ok: true, key };
}

export const keyReusedMessage = (key: string) =>
  `Idempotency-Key "${key.slice(0, 60)}" was used with another body in the last 24 h: one key names one request; send a new key for a new request`;
export const keyInFlightMessage = (key: string) => `a request with Idempotency-Key "${key.slice(0, 60)}" is still starting its run; retry shortly`;
