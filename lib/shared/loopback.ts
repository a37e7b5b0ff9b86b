// What counts as this machine (DESIGN: The dashboard, "Request checks"): the one home of the
// loopback rule, used by `aqven serve` for the address it listens on, by the request checks for a
// request's Host, and by the open (no account yet) dashboard for the peer's address.

/** Host names that always mean this machine (a bracketed IPv6 literal as it appears in a Host header). */
const LOOPBACK_NAMES = new Set(['localhost', '[::1]', '::1']);

/**
 * Whether an address or host name is loopback: `localhost`, 127.0.0.0/8, ::1, and IPv4-mapped
 * 127.x (`::ffff:127.0.0.1`, as Node reports an IPv4 peer on a dual-stack socket).
 */
export function isLoopback(hostOrAddress: string): boolean {
  const h = hostOrAddress.trim().toLowerCase();
  if (LOOPBACK_NAMES.has(h)) return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}
