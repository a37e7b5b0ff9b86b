// How long a request may wait for a run to end (DESIGN: The dashboard, "Calling AQVEN from a
// service"): `Prefer: wait=N` on `POST /api/runs` (RFC 7240 §4.3, delta-seconds) and `?wait=N` on
// `GET /api/runs/:id` are read here alike. A value that is no whole number of seconds is refused
// (E_WAIT, 400) at every door; one above WAIT_MAX_S waits WAIT_MAX_S, and Preference-Applied says so.
// Other preferences (`respond-async`, `return=…`) are ignored, as RFC 7240 §2 asks.

/** the longest wait a request gets, in seconds: a proxy's idle timeout is often 60 s */
export const WAIT_MAX_S = 60;
/** the code of a wait that is no whole number of seconds */
export const WAIT_CODE = 'E_WAIT';

export type WaitAsked = { ok: true; waitS: number | null } | { ok: false; code: typeof WAIT_CODE; message: string };

/** `raw` as seconds to wait: null when absent, a refusal when no whole number, at most WAIT_MAX_S. */
export function waitSeconds(raw: string | null | undefined, where: string): WaitAsked {
  if (raw === null || raw === undefined) return { ok: true, waitS: null };
  const text = raw.trim().replace(/^"(.*)"$/, '$1');
  if (!/^\d{1,9}$/.test(text)) return { ok: false, code: WAIT_CODE, message: `${where} must be a whole number of seconds (0 to ${WAIT_MAX_S}), got "${raw.slice(0, 40)}"` };
  return { ok: true, waitS: Math.min(Number(text), WAIT_MAX_S) };
}

/**
 * The `wait` preference of a `Prefer` header (several preferences separated by commas, a
 * preference's parameters by semicolons; names are case-insensitive): its seconds, null when none.
 */
export function preferWait(header: string | null): WaitAsked {
  if (header === null) return { ok: true, waitS: null };
  for (const pref of header.split(',')) {
    const [token, ...value] = (pref.split(';')[0] ?? '').split('=');
    if (token?.trim().toLowerCase() === 'wait') return waitSeconds(value.join('='), 'Prefer: wait');
  }
  return { ok: true, waitS: null };
}

/** The `Preference-Applied` value of a wait that was honoured (the run ended within it). */
export function waitApplied(waitS: number): string {
  return `wait=${waitS}`;
}
