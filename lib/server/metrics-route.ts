// GET /metrics on the dashboard (DESIGN: Observability, "Metrics"): this process's metrics in
// Prometheus's text format, for a request from this machine or a metrics token
// (lib/observe/metrics-access.ts); refusals in the API's JSON shape. The registry is the process's
// (lib/observe/process-metrics.ts), made by `aqven serve` as it starts, or here at the first scrape.
import 'server-only';
import { UNAVAILABLE_CODE } from '@/lib/contracts/api-route';
import { metricsAccess } from '@/lib/observe/metrics-access';
import { processMetrics } from '@/lib/observe/process-metrics';
import { fromThisMachine, peerAddress, unavailableFor } from './access';
import { apiRefusal } from './api-refusal';
import { serverSession } from './session';

export async function metricsResponse(req: Request): Promise<Response> {
  const h = req.headers;
  let db;
  try {
    db = (await serverSession()).db;
  } catch (err) {
    return apiRefusal(503, { code: UNAVAILABLE_CODE, message: unavailableFor(h, err) }, { retryAfterS: 5 });
  }
  const access = await metricsAccess(db, { local: fromThisMachine(h), authorization: h.get('authorization'), address: peerAddress(h), now: Date.now() });
  if (!access.ok) {
    // the detail of a 503 goes to the log, and to this machine only
    const message = access.status === 503 ? unavailableFor(h, access.cause) : access.message;
    const res = apiRefusal(access.status, { code: access.code, message }, { retryAfterS: access.retryAfterS });
    if (access.authenticate) res.headers.set('www-authenticate', access.authenticate);
    return res;
  }
  const { contentType, body } = await processMetrics().expose(db);
  return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
