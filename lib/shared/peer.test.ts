// Where a request comes from: every combination of stamp, proxy headers and trust (DESIGN: The
// dashboard, "Who is asking, and from where"). Only serve's stamp counts; an unknown peer is never
// this machine.
import { afterEach, describe, expect, it } from 'vitest';
import { armPeerStamps, PEER_HEADER, PEER_SIG_HEADER, peerStamp, requestPeer, stampFacts, stampedPeer, type StampFacts } from './peer';

const KEY = Symbol.for('aqven.peer-stamp-key');
const g = globalThis as { [KEY]?: Buffer };

const bag = (h: Record<string, string>) => new Headers(h);
const LOCAL: StampFacts = { address: '127.0.0.1', forwardedFor: null, proxied: false };

afterEach(() => {
  delete g[KEY];
});

describe('the serve stamp', () => {
  it('verifies only under the key of this process, and carries what serve saw', () => {
    armPeerStamps();
    const facts: StampFacts = { address: '10.0.0.7', forwardedFor: '198.51.100.4', proxied: true };
    const stamp = peerStamp(facts);
    expect(stampedPeer(bag(stamp))).toEqual(facts);
    // a client's own header, with any signature it can make, is not a stamp
    const forged = Buffer.from(JSON.stringify(['127.0.0.1', null, false])).toString('base64url');
    expect(stampedPeer(bag({ [PEER_HEADER]: forged }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: forged, [PEER_SIG_HEADER]: stamp[PEER_SIG_HEADER] }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: forged, [PEER_SIG_HEADER]: '00' }))).toBeNull();
    expect(stampedPeer(bag({ [PEER_HEADER]: forged, [PEER_SIG_HEADER]: 'not hex at all' }))).toBeNull();
  });

  it('a stamp made under another process key does not verify', () => {
    armPeerStamps();
    const stamp = peerStamp(LOCAL);
    delete g[KEY];
    armPeerStamps(); // a new process: a new key
    expect(stampedPeer(bag(stamp))).toBeNull();
  });

  it('without a key (plain `next start`: nobody armed it) nothing verifies, and nothing can be stamped', () => {
    expect(stampedPeer(bag({ [PEER_HEADER]: 'x', [PEER_SIG_HEADER]: 'ab'.repeat(32) }))).toBeNull();
    expect(() => peerStamp(LOCAL)).toThrow(/not armed/);
  });

  it('arming twice keeps the first key', () => {
    armPeerStamps();
    const stamp = peerStamp(LOCAL);
    armPeerStamps();
    expect(stampedPeer(bag(stamp))).toEqual(LOCAL);
  });

  it('the facts are the headers as the client sent them: any proxy header marks the request as proxied', () => {
    expect(stampFacts('127.0.0.1', bag({ host: 'localhost' }))).toEqual(LOCAL);
    for (const h of ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip']) {
      expect(stampFacts('127.0.0.1', bag({ [h]: '198.51.100.4' })).proxied, h).toBe(true);
    }
    expect(stampFacts('127.0.0.1', bag({ 'x-forwarded-for': '198.51.100.4, 127.0.0.1' })).forwardedFor).toBe('198.51.100.4, 127.0.0.1');
  });
});

describe('requestPeer: every stamp × proxy header × trust', () => {
  const sent: [string, Record<string, string>][] = [
    ['none', {}],
    ['X-Forwarded-For', { 'x-forwarded-for': '198.51.100.4, 127.0.0.1' }],
    ['Forwarded', { forwarded: 'for=198.51.100.4' }],
    ['X-Forwarded-Host', { 'x-forwarded-host': 'localhost' }],
    ['X-Real-IP', { 'x-real-ip': '127.0.0.1' }],
  ];
  const sockets = ['127.0.0.1', '203.0.113.9'];

  for (const socket of sockets) {
    for (const [name, headers] of sent) {
      const facts = stampFacts(socket, bag(headers));
      it(`untrusted proxy, socket ${socket}, client sent ${name}`, () => {
        const p = requestPeer(facts, false);
        if (name !== 'none') expect(p).toEqual({ known: false, why: 'untrusted-forward' });
        else expect(p).toEqual({ known: true, address: socket, loopback: socket === '127.0.0.1' });
      });

      it(`trusted proxy, socket ${socket}, client sent ${name}`, () => {
        // the client the proxy names (the last hop it added), never the socket: the socket is the proxy
        const p = requestPeer(facts, true);
        if (headers['x-forwarded-for']) expect(p).toEqual({ known: true, address: '127.0.0.1', loopback: true });
        else expect(p).toEqual({ known: false, why: 'no-forward' });
      });
    }
  }

  it('no stamp: unknown, trusted proxy or not', () => {
    expect(requestPeer(null, false)).toEqual({ known: false, why: 'no-stamp' });
    expect(requestPeer(null, true)).toEqual({ known: false, why: 'no-stamp' });
  });

  it('behind a trusted proxy the client is the last hop, whatever earlier hops a client wrote', () => {
    expect(requestPeer({ address: '127.0.0.1', forwardedFor: '127.0.0.1, 198.51.100.4', proxied: true }, true)).toEqual({ known: true, address: '198.51.100.4', loopback: false });
    expect(requestPeer({ address: '127.0.0.1', forwardedFor: ' , ', proxied: true }, true)).toEqual({ known: false, why: 'no-forward' });
  });

  it('IPv4-mapped loopback and ::1 are loopback; other addresses are not', () => {
    expect(requestPeer({ ...LOCAL, address: '::ffff:127.0.0.1' }, false)).toMatchObject({ known: true, loopback: true });
    expect(requestPeer({ ...LOCAL, address: '::1' }, false)).toMatchObject({ known: true, loopback: true });
    expect(requestPeer({ ...LOCAL, address: '::ffff:10.0.0.1' }, false)).toMatchObject({ known: true, loopback: false });
  });
});
