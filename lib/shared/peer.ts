// Where a request comes from (DESIGN: The dashboard, "Who is asking, and from where"): the one home
// of the rule every door asks through lib/server/access.ts. Only `aqven serve` can know: it sees
// the socket and the headers exactly as the client sent them, before Next.js adds forwarding
// headers of its own (it sets X-Forwarded-For/-Host/-Proto on every request it hands on, so the app
// can never tell a proxy's from Next's). Serve stamps each request with those facts — the socket's
// address, the client's own X-Forwarded-For, whether any proxy header came — and an HMAC of them
// under a key made in this process (armPeerStamps): the key never leaves the process, so neither a
// client nor a hand-set environment variable on plain `next start` can make a stamp the app
// accepts. From a stamp: behind a proxy the operator declared (AQVEN_TRUST_PROXY=1), the client is
// the last X-Forwarded-For hop that proxy added; without that declaration, a request that came
// with a proxy header is from an unknown address; else the socket's. No stamp: unknown. And an
// unknown peer is never this machine.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isLoopback } from './loopback';

/** the facts `aqven serve` saw (JSON, base64url) */
export const PEER_HEADER = 'x-aqven-peer';
/** HMAC-SHA256 of PEER_HEADER's value under this process's key */
export const PEER_SIG_HEADER = 'x-aqven-peer-sig';
/** headers a proxy adds: a request the client sent with one came through a proxy, whatever its socket says */
export const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'] as const;

// one key per process, shared by the command's bundle and the dashboard's (two module graphs, one realm)
const KEY = Symbol.for('aqven.peer-stamp-key');
const g = globalThis as { [KEY]?: Buffer };

/** Makes this process's stamp key (once): `aqven serve` calls it before it serves anything. */
export function armPeerStamps(): void {
  g[KEY] ??= randomBytes(32);
}

const sign = (key: Buffer, value: string) => createHmac('sha256', key).update(value).digest('hex');

interface HeaderBag {
  get(name: string): string | null;
}

/** What serve saw of a request, before anything else touched it. */
export interface StampFacts {
  /** the socket's remote address */
  address: string;
  /** the client's own X-Forwarded-For, as sent (null when it sent none) */
  forwardedFor: string | null;
  /** whether the client sent any of FORWARDING_HEADERS */
  proxied: boolean;
}

/** Whether a request carries any header a proxy adds. */
export function forwarded(h: HeaderBag): boolean {
  return FORWARDING_HEADERS.some((name) => h.get(name) !== null);
}

/** The facts of a request as it arrived: its socket's address and its headers as the client sent them. */
export function stampFacts(address: string, h: HeaderBag): StampFacts {
  return { address, forwardedFor: h.get('x-forwarded-for'), proxied: forwarded(h) };
}

/** The stamp headers for the facts; throws when the process has no key (only serve stamps). */
export function peerStamp(facts: StampFacts): Record<typeof PEER_HEADER | typeof PEER_SIG_HEADER, string> {
  const key = g[KEY];
  if (!key) throw new Error('peer stamps are not armed in this process (aqven serve arms them)');
  const value = Buffer.from(JSON.stringify([facts.address, facts.forwardedFor, facts.proxied])).toString('base64url');
  return { [PEER_HEADER]: value, [PEER_SIG_HEADER]: sign(key, value) };
}

/** The stamped facts, or null: no key in this process (not under serve), no stamp, or a stamp that does not verify. */
export function stampedPeer(h: HeaderBag): StampFacts | null {
  const key = g[KEY];
  const value = h.get(PEER_HEADER);
  const sig = h.get(PEER_SIG_HEADER);
  if (!key || !value || !sig) return null;
  const want = Buffer.from(sign(key, value), 'hex');
  const got = Buffer.from(sig, 'hex');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
  const [address, forwardedFor, proxied] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as [string, string | null, boolean];
  return { address, forwardedFor, proxied };
}

export type Peer =
  | { known: true; address: string; loopback: boolean }
  | {
      known: false;
      /**
       * `no-stamp`: nothing vouches for the request (plain `next start`); `untrusted-forward`: the
       * client sent a proxy's header while AQVEN_TRUST_PROXY is unset; `no-forward`: the proxy is
       * trusted but named no client
       */
      why: 'no-stamp' | 'untrusted-forward' | 'no-forward';
    };

/** The last hop of an X-Forwarded-For value: the address the trusted proxy itself saw. */
function lastHop(forwardedFor: string | null): string | null {
  const hops = forwardedFor
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return hops?.length ? hops[hops.length - 1]! : null;
}

/** Where the request comes from, from serve's verified stamp (stampedPeer) alone: a pure function of it and the trust setting. */
export function requestPeer(stamp: StampFacts | null, trustProxy: boolean): Peer {
  if (!stamp) return { known: false, why: 'no-stamp' };
  if (trustProxy) {
    const client = lastHop(stamp.forwardedFor);
    return client ? { known: true, address: client, loopback: isLoopback(client) } : { known: false, why: 'no-forward' };
  }
  if (stamp.proxied) return { known: false, why: 'untrusted-forward' };
  return { known: true, address: stamp.address, loopback: isLoopback(stamp.address) };
}
