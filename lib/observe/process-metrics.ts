// This process's metrics, made once (DESIGN: Observability, "Metrics"): `aqven serve` makes them as
// it starts, `aqven worker --metrics-port` too, and GET /metrics reads them. They live on
// globalThis, not in this module: under `aqven serve` the route's code is Next.js's bundle of lib/,
// a second copy of this module (and of prom-client) in the same process, and it must expose the
// registry the command's observer feeds — so the first copy to ask makes them, with its own
// prom-client, and every later copy uses that one.
import { addRunObserver } from '@/lib/flow/run-observers';
import { createMetrics, type AqvenMetrics } from './metrics';

const KEY = Symbol.for('aqven.metrics');

/** This process's metrics, and its observer of every run from now on (made at the first call). */
export function processMetrics(): AqvenMetrics {
  const g = globalThis as { [KEY]?: AqvenMetrics };
  if (!g[KEY]) {
    const made = createMetrics({ processMetrics: true });
    addRunObserver(made.observer);
    g[KEY] = made;
  }
  return g[KEY];
}
