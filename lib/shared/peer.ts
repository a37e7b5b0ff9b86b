// Where a request comes from (DESIGN: The dashboard, "Who is asking, and from where"): the one home
// of the rule every door asks through lib/server/access.ts. The address is known only when
// something the client cannot write says it:
// - `aqven serve` stamps each request with its socket's address and an HMAC of it under a key made
//   in this process (armPeerStamps): the key never leaves the process, so neither a client nor a
//   hand-set environment variable on plain `next start` can produce a stamp the app accepts;
// - behind a proxy the operator declared (AQVEN_TRUST_PROXY=1), the last X-Forwarded-For hop, the
//   one that proxy added.
// Anything else is unknown, and an unknown peer is never this machine.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isLoopback } from './loopback';

/** the socket's address, as `aqven serve` saw it (lowercase: as Node keys headers) */
export const PEER_HEADER = 'x-aqven-peer';
/** HMAC-SHA256 of PEER_HEADER's value under this process's key */
export const PEER_SIG_HEADER = 'x-aqven-peer-sig';
/** headers a proxy adds: a request carrying one came through a proxy, whatever its socket says */
export const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'] as const;

// one key per process, shared by the command's bundle and the dashboard's (two module graphs, one realm)
const KEY = Symbol.for('aqven.peer-stamp-key');
const g = globalThis as { [KEY]?: Buffer };

/** Makes this process's stamp key (once): `aqven serve` calls it before it serves anything. */
export function armPeerStamps(): void {
  g[KEY] ??= randomBytes(32);
}

const sign = (key: Buffer, address: string) => createHmac('sha256', key).update(address).digest('hex');

/** The stamp headers for a socket address; throws when the process has no key (only serve stamps). */
export function peerStamp(address: string): Record<typeof PEER_HEADER | typeof PEER_SIG_HEADER, string> {
  const key = g[KEY];
  if (!key) throw new Error('peer stamps are not armed in this process (aqven serve arms them)');
  return { [PEER_HEADER]: address, [PEER_SIG_HEADER]: sign(key, address) };
}

interface HeaderBag {
  get(name: string): string | null;
}

/** The stamped socket address, or null: no key in this process (not under serve), no stamp, or a stamp that does not verify. */
export function stampedPeer(h: HeaderBag): string | null {
  const key = g[KEY];
  const address = h.get(PEER_HEADER);
  const sig = h.get(PEER_SIG_HEADER);
  if (!key || !address || !sig) return null;
  const want = Buffer.from(sign(key, address), 'hex');
  const got = Buffer.from(sig, 'hex');
  return got.length === want.length && timingSafeEqual(got, want) ? address : null;
}

export type Peer =
  | { known: true; address: string; loopback: boolean }
  | {
      known: false;
      /**
       * `no-stamp`: nothing vouches for the socket (plain `next start`); `untrusted-forward`: a
       * proxy's header arrived while AQVEN_TRUST_PROXY is unset; `no-forward`: the proxy is
       * trusted but named no client
       */
      why: 'no-stamp' | 'untrusted-forward' | 'no-forward';
    };

/** Whether a request carries any header a proxy adds. */
export function forwarded(h: HeaderBag): boolean {
  return FORWARDING_HEADERS.some((name) => h.get(name) !== null);
}

/** The last hop of X-Forwarded-For: the address the trusted proxy itself saw. */
function lastForwardedHop(h: HeaderBag): string | null {
  const hops = h.get('x-forwarded-for')?.split(',').map((s) => s.trim()).filter(Boolean);
  return hops?.length ? hops[hops.length - 1]! : null;
}

/**
 * Where the request comes from. `stamped` is the verified serve stamp (stampedPeer), passed in so
 * the rule stays a pure function of its inputs.
 */
export function requestPeer(h: HeaderBag, trustProxy: boolean, stamped: string | null): Peer {
  if (trustProxy) {
    const client = lastForwardedHop(h);
    return client ? { known: true, address: client, loopback: isLoopback(client) } : { known: false, why: 'no-forward' };
  }
  if (forwarded(h)) return { known: false, why: 'untrusted-forward' };
  return stamped ? { known: true, address: stamped, loopback: isLoopback(stamped) } : { known: false, why: 'no-stamp' };
}
