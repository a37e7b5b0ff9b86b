// A request body the dashboard will not read (DESIGN: Limits, "request body"): one larger than
// AQVEN_MAX_BODY_BYTES is refused before it is read — by the proxy when its Content-Length says so
// (lib/server/request-guard.ts), by the route's capped read when it comes without one
// (lib/server/read-body.ts) — with one code and the same words at both.
import type { Refusal } from './refusal';

/** the request body is too large, or not the JSON the route takes */
export const BODY_CODE = 'E_BODY';

/** The refusal of a body larger than `maxBytes`. */
export function bodyTooLarge(maxBytes: number): Refusal<never> {
  return { code: BODY_CODE, field: 'form', message: `the body is larger than ${maxBytes} bytes (AQVEN_MAX_BODY_BYTES)` };
}
