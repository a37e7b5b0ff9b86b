// The example service (examples/ticket-service.mjs, README "Calling AQVEN from a service") end to
// end against the served dashboard — `aqven serve`, its proxy and its token check — as a service
// would run it: a ticket posted to the service is classified through AQVEN in the same request, and
// the same request retried (its X-Request-Id as the Idempotency-Key) gets the same run.
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { ticketService } from '../examples/ticket-service.mjs';
import { createToken } from './accounts';

test('a ticket posted to the example service is classified through aqven serve in the same request; a retry gets the same run', async ({ baseURL, request }) => {
  const token = createToken('e2e-ticket-service', 'editor');
  const service = ticketService({ aqvenUrl: baseURL!, token, wait: 45 });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}/tickets`;
    const post = () =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'e2e-ticket-4711' }, body: JSON.stringify({ ticket: 'I was charged twice' }) });
    const first = await post();
    const body = (await first.json()) as { queue?: string; run?: string; error?: string };
    // the showcase's simulated providers play its chaos: a run may fail, and the service says so with the run
    expect([200, 502], JSON.stringify(body)).toContain(first.status);
    expect(body.run).toMatch(/^[0-9a-f-]{36}$/);
    if (first.status === 200) expect(typeof body.queue).toBe('string');
    // the run ended before the service answered, and it was started by the service's token
    const run = await request.get(`/api/runs/${body.run}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(run.status()).toBe(200);
    expect(await run.json()).toMatchObject({ status: first.status === 200 ? 'succeeded' : 'failed', startedBy: 'token:e2e-ticket-service' });
    // the same request again: the same run, nothing started
    const again = (await (await post()).json()) as { run?: string };
    expect(again.run).toBe(body.run);
  } finally {
    await new Promise((resolve) => service.close(resolve));
  }
});
