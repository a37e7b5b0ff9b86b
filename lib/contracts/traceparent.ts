// `traceparent` on `POST /api/runs` (DESIGN: Observability, "Traces"; W3C Trace Context Level 1,
// §3.2): a service's trace continues into the run it starts — the run's span is a child of the
// caller's span. A header that does not parse is ignored and the run starts a trace of its own, as
// §3.2.2 asks of a vendor that cannot parse it (never a 400: the run is the caller's business, its
// tracing a courtesy). `tracestate` is not carried.

/** The caller's span a run's trace continues: the W3C fields, read. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero */
  traceId: string;
  /** the caller's span: 16 lowercase hex digits, not all zero */
  spanId: string;
  /** the caller sampled its trace (flag bit 0) */
  sampled: boolean;
  /** as stored and sent on (`runs.traceparent`): version 00, whatever version came in */
  header: string;
}

const HEX = /^[0-9a-f]+$/;
const zeros = (s: string) => /^0+$/.test(s);

/**
 * The header's parent, or null when absent or malformed (§3.2.2: an unknown version is read as far
 * as version 00 goes — 55 characters, then nothing or a `-`; version ff, upper-case hex, an id of
 * zeros, a wrong length or two headers joined by a comma are malformed).
 */
export function parseTraceparent(header: string | null | undefined): TraceParent | null {
  if (header === null || header === undefined) return null;
  const value = header.trim();
  if (value.length < 55) return null;
  const version = value.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return null;
  if (version === '00' ? value.length !== 55 : value.length > 55 && value[55] !== '-') return null;
  const [v, traceId, spanId, flags] = value.slice(0, 55).split('-');
  if (v !== version || traceId?.length !== 32 || spanId?.length !== 16 || flags?.length !== 2) return null;
  if (!HEX.test(traceId) || !HEX.test(spanId) || !HEX.test(flags) || zeros(traceId) || zeros(spanId)) return null;
  const sampled = (parseInt(flags, 16) & 1) === 1;
  return { traceId, spanId, sampled, header: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}
