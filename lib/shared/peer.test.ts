// Where a request comes from: every combination of stamp, proxy headers and trust (DESIGN: The
// dashboard, "Who is asking, and from where"). An unknown peer is never this machine.
import { afterEach, describe, expect, it } from 'vitest';
import { armPeerStamps, PEER_HEADER, PEER_SIG_HEADER, peerStamp, requestPeer, stampedPeer } from './peer';

const KEY = Symbol.for('aqven.peer-stamp-key');
const g = globalThis as { [KEY]?: Buffer };

const bag = (h: Record<string, string>) => new Headers(h);

afterEach(() => {
  delete g[KEY];
});

describe('the serve stamp', () => {
  it('verifies only under the key of this process', () => {
    armPeerStamps();
    const stamp = peerStamp('10.0.0.7');
    expect(stamp[PEER_HEADER]).toBe('10.0.0.7');
    expect(stampedPeer(bag(stamp))).toBe('10.0.0.7');
    // a client's own header, with any signature it can make, is not a stamp
    expect(stampedPeer(bag({ [PEER_HEADER]: '127.0.0.1' }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: '127.0.0.1', [PEER_SIG_HEADER]: stamp[PEER_SIG_HEADER] }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: '127.0.0.1', [PEER_SIG_HEADER]: '00' }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: '127.0.0.1', [PEER_SIG_HEADER]: 'not hex at all' }))).toBeNull();
  });

  it('a stamp made under another process key does not verify', () => {
    armPeerStamps();
    const stamp = peerStamp('127.0.0.1');
    delete g[KEY];
    armPeerStamps(); // a new process: a new key
    expect(stampedPeer(bag(stamp))).toBeNull();
  });

  it('without a key (plain `next start`: nobody armed it) nothing verifies, and nothing can be stamped', () => {
    expect(stampedPeer(bag({ [PEER_HEADER]: '127.0.0.1', [PEER_SIG_HEADER]: 'ab'.repeat(32) }))).toBeNull();
    expect(() => peerStamp('127.0.0.1')).toThrow(/not armed/);
  });

  it('arming twice keeps the first key', () => {
    armPeerStamps();
    const stamp = peerStamp('127.0.0.1');
    armPeerStamps();
    expect(stampedPeer(bag(stamp))).toBe('127.0.0.1');
  });
});

describe('requestPeer: every stamp × proxy header × trust', () => {
  const proxyHeaders: [string, Record<string, string>][] = [
    ['none', {}],
    ['X-Forwarded-For', { 'x-forwarded-for': '198.51.100.4, 127.0.0.1' }],
    ['Forwarded', { forwarded: 'for=198.51.100.4' }],
    ['X-Forwarded-Host', { 'x-forwarded-host': 'localhost' }],
    ['X-Real-IP', { 'x-real-ip': '127.0.0.1' }],
  ];
  const stamps: [string, string | null][] = [
    ['loopback stamp', '127.0.0.1'],
    ['remote stamp', '203.0.113.9'],
    ['no stamp', null],
  ];

  for (const [stampName, stamped] of stamps) {
    for (const [headerName, headers] of proxyHeaders) {
      it(`untrusted proxy, ${stampName}, ${headerName}`, () => {
        const p = requestPeer(bag(headers), false, stamped);
        if (headerName !== 'none') expect(p).toEqual({ known: false, why: 'untrusted-forward' });
        else if (stamped === null) expect(p).toEqual({ known: false, why: 'no-stamp' });
        else expect(p).toEqual({ known: true, address: stamped, loopback: stamped === '127.0.0.1' });
      });

      it(`trusted proxy, ${stampName}, ${headerName}`, () => {
        const p = requestPeer(bag(headers), true, stamped);
        // the client the proxy names (the last hop it added), never the socket: the socket is the proxy
        if (headers['x-forwarded-for']) expect(p).toEqual({ known: true, address: '127.0.0.1', loopback: true });
        else expect(p).toEqual({ known: false, why: 'no-forward' });
      });
    }
  }

  it('behind a trusted proxy the client is the last hop, whatever earlier hops a client wrote', () => {
    expect(requestPeer(bag({ 'x-forwarded-for': '127.0.0.1, 198.51.100.4' }), true, '127.0.0.1')).toEqual({ known: true, address: '198.51.100.4', loopback: false });
    expect(requestPeer(bag({ 'x-forwarded-for': ' , ' }), true, '127.0.0.1')).toEqual({ known: false, why: 'no-forward' });
  });

  it('IPv4-mapped loopback and ::1 are loopback; other addresses are not', () => {
    expect(requestPeer(bag({}), false, '::ffff:127.0.0.1')).toMatchObject({ known: true, loopback: true });
    expect(requestPeer(bag({}), false, '::1')).toMatchObject({ known: true, loopback: true });
    expect(requestPeer(bag({}), false, '::ffff:10.0.0.1')).toMatchObject({ known: true, loopback: false });
  });
});
