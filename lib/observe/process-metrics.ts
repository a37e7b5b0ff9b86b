// This process's metrics, made once (DESIGN: Observability, "Metrics"): `aqven serve` makes them as
// it starts, `aqven worker --metrics-port` too, and GET /metrics reads them. They live on
// globalThis, not in this module: under `aqven serve` the route's code is Next.js's bundle of lib/,
// a second copy of this module (and of prom-client) in the same process, and it must expose the
// registry the command's observer feeds — so the first copy to ask makes them, with its own
// prom-client, and every later copy uses that one.
import { addRunObserver } from '@/lib/flow/run-observers';
import { createMetrics, type AqvenMetrics } from './metrics';

const KEY = Symbol.for('aqven.metrics');
/** the removal of their run observer */
const UNWATCH = Symbol.for('aqven.metrics.unwatch');
type Held = { [KEY]?: AqvenMetrics; [UNWATCH]?: () => void };

/** This process's metrics, and its observer of every run from now on (made at the first call). */
export function processMetrics(): AqvenMetrics {
  const g = globalThis as Held;
  if (!g[KEY]) {
    const made = createMetrics({ processMetrics: true });
    g[UNWATCH] = addRunObserver(made.observer);
    g[KEY] = made;
  }
  return g[KEY];
}

/**
 * Forgets this process's metrics and stops their observer, as a new process has none: for the
 * integration tests' shared process, between files (test/helpers/shared-process-setup.ts), so that
 * no file counts the runs of another.
 */
export function forgetProcessMetricsForTests(): void {
  const g = globalThis as Held;
  g[UNWATCH]?.();
  delete g[UNWATCH];
  delete g[KEY];
}
