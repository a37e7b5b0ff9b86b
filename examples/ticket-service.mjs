// An example service (README, "Calling AQVEN from a service"): a small HTTP endpoint a support
// backend would run. POST /tickets {"ticket": "…"} classifies the ticket through AQVEN's triage flow
// (the showcase's) with the typed client and answers in the same request: the queue, the confidence
// and the drafted reply, or 504 with the run's id when the run did not end within the wait.
//   AQVEN_URL=http://127.0.0.1:3000 AQVEN_TOKEN=aqven_… node examples/ticket-service.mjs
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createClient } from 'aqven/client';

/** The service's HTTP server (not listening yet): its calls go to AQVEN at `aqvenUrl`. */
export function ticketService({ aqvenUrl, token, wait = 30 }) {
  const aqven = createClient({ baseUrl: aqvenUrl, token });
  return createServer(async (req, res) => {
    const reply = (status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || req.url !== '/tickets') return reply(404, { error: 'POST /tickets' });
    let ticket;
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      ticket = JSON.parse(Buffer.concat(chunks).toString('utf8')).ticket;
    } catch {
      return reply(400, { error: 'a JSON body {"ticket": "…"}' });
    }
    if (typeof ticket !== 'string' || !ticket) return reply(400, { error: 'a JSON body {"ticket": "…"}' });
    try {
      // the caller's request id as the Idempotency-Key: a retried request never starts a second run
      const key = req.headers['x-request-id'] ?? randomUUID();
      const started = await aqven.runs.start('triage', { ticket }, { wait, idempotencyKey: String(key) });
      if (!started.ended) return reply(504, { error: 'the triage did not end in time', run: started.id });
      const { run } = started;
      if (run.status !== 'succeeded') return reply(502, { error: run.error?.message ?? run.status, run: run.id });
      const classify = run.nodes.find((n) => n.id === 'classify')?.output;
      const draft = run.nodes.find((n) => n.id === 'draft')?.output;
      return reply(200, { queue: classify?.queue ?? null, confidence: classify?.confidence ?? null, draft: draft ?? null, run: run.id });
    } catch (err) {
      return reply(502, { error: err instanceof Error ? err.message : String(err) });
    }
  });
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const port = Number(process.env.PORT ?? 8080);
  ticketService({ aqvenUrl: process.env.AQVEN_URL ?? 'http://127.0.0.1:3000', token: process.env.AQVEN_TOKEN }).listen(port, () =>
    console.log(`ticket service on http://127.0.0.1:${port}/tickets`),
  );
}
