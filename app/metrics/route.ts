// GET /metrics: this process's metrics in Prometheus's text format (docs/monitoring.md, "Metrics");
// who may read them and what is counted: lib/server/metrics-route.ts.
import { metricsResponse } from '@/lib/server/metrics-route';

export const dynamic = 'force-dynamic';

export function GET(req: Request) {
  return metricsResponse(req);
}
