// Stands in for `next/headers` when a test calls a server action or a page's server code outside
// Next.js: the request is one from this machine as `aqven serve` hands it over — Host localhost and
// the socket's loopback address stamped with this process's key — so with no account in the
// database the dashboard is open, as for the demo (DESIGN: The dashboard, "Who is asking, and from
// where"). Use: vi.mock('next/headers', () => import('@/test/helpers/next-headers')); a request a
// test builds itself spreads LOCAL_HEADERS.
import { armPeerStamps, peerStamp } from '@/lib/shared/peer';

armPeerStamps();

/** a request from this machine through `aqven serve`: loopback Host, loopback socket, a valid stamp */
export const LOCAL_HEADERS: Readonly<Record<string, string>> = { host: 'localhost', ...peerStamp({ address: '127.0.0.1', forwardedFor: null, proxied: false }) };

export async function headers(): Promise<Headers> {
  return new Headers(LOCAL_HEADERS);
}
