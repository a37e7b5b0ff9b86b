// Stands in for `next/headers` when a test calls a server action or a page's server code outside
// Next.js: by default the request is one from this machine as `aqven serve` hands it over — Host
// localhost and the socket's loopback address stamped with this process's key — so with no account
// in the database the dashboard is open, as for the demo (DESIGN: The dashboard, "Who is asking,
// and from where"). A test that asks as someone else sets `request.headers`. Every integration file
// has this stand-in (test/helpers/next-stand-ins.ts) and starts with the default request; a request
// a test builds itself spreads LOCAL_HEADERS.
import { armPeerStamps, peerStamp } from '@/lib/shared/peer';

armPeerStamps();

/** a request from this machine through `aqven serve`: loopback Host, loopback socket, a valid stamp */
export const LOCAL_HEADERS: Readonly<Record<string, string>> = { host: 'localhost', ...peerStamp({ address: '127.0.0.1', forwardedFor: null, proxied: false }) };

/**
 * The request the server code is answering: one object for the whole process, as the code that
 * imported `next/headers` keeps the stand-in it got first, whichever test file loaded it.
 */
export const request: { headers: Record<string, string> } = { headers: { ...LOCAL_HEADERS } };

/** Back to a request from this machine (before every integration test file). */
export function resetRequestForTests(): void {
  request.headers = { ...LOCAL_HEADERS };
}

export async function headers(): Promise<Headers> {
  return new Headers(request.headers);
}

/** the request carries no cookie, and what the code sets is dropped (sessions travel in `request.headers`) */
export async function cookies(): Promise<{ get: (name: string) => undefined; set: (...args: unknown[]) => void }> {
  return { get: () => undefined, set: () => {} };
}
