// The dashboard's API when its run database cannot be reached (DESIGN: The dashboard, accounts):
// who is asking cannot be read, so the answer is a 503 — never an empty 500 and never a stack. To
// this machine it says why (the database named without its password); to anyone else it names no
// host and no path (the server log has the detail).
import { NextRequest } from 'next/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { copyShowcase } from '../helpers/showcase';
import { saveEnv } from '../helpers/saved-env';
import { peerStamp } from '@/lib/shared/peer';
import { LOCAL_HEADERS } from '@/test/helpers/next-headers';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);

beforeAll(() => {
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  // a port nothing listens on: the first connection is refused at once
  process.env.AQVEN_DATABASE_URL = 'postgres://aqven:hunter2secret@127.0.0.1:1/aqven';
});

afterAll(() => restoreEnv());

describe('the API with its database down', () => {
  it('GET and POST /api/runs answer 503 naming the database, without its password', async () => {
    const { GET, POST } = await import('@/app/api/runs/route');
    const headers = { ...LOCAL_HEADERS, authorization: 'Bearer aqven_some_token', 'content-type': 'application/json' };
    for (const res of [
      await GET(new NextRequest('http://localhost/api/runs', { headers })),
      await POST(new NextRequest('http://localhost/api/runs', { method: 'POST', headers, body: JSON.stringify({ flow: 'triage', input: { ticket: 'x' } }) })),
    ]) {
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: string };
      expect(body.error).toMatch(/^cannot connect to the PostgreSQL database postgres:\/\/aqven:\*\*\*@127\.0\.0\.1:1\/aqven: /);
      expect(body.error).not.toContain('hunter2secret');
    }
  });

  it('to a caller not known to be this machine, a generic 503 that names no host', async () => {
    const { GET } = await import('@/app/api/runs/route');
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const callers: Record<string, string>[] = [
        { host: 'localhost', authorization: 'Bearer aqven_some_token' }, // plain `next start`: nothing vouches for the socket
        // through a proxy AQVEN_TRUST_PROXY does not declare, as aqven serve stamps it
        { host: 'localhost', ...peerStamp({ address: '127.0.0.1', forwardedFor: '198.51.100.4', proxied: true }), authorization: 'Bearer aqven_some_token' },
      ];
      for (const headers of callers) {
        const res = await GET(new NextRequest('http://localhost/api/runs', { headers }));
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({
          error: 'the dashboard cannot serve requests right now (its database or project cannot be read); the server log says why',
          code: 'E_UNAVAILABLE',
        });
      }
      // the detail went to the server log
      expect(log.mock.calls.some(([line]) => String(line).includes('cannot connect to the PostgreSQL database postgres://aqven:***@127.0.0.1:1/aqven'))).toBe(true);
    } finally {
      log.mockRestore();
    }
  });
});
