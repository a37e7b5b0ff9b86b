// A Prometheus counter whose values are kept here between scrapes (DESIGN: Observability,
// "Metrics"): an event adds to a Map entry keyed by its label values, and each scrape hands the
// totals to prom-client (its `collect`). prom-client hashes and checks the labels at every `inc`,
// which was most of what a run cost the metrics (bench/metrics-observer.bench.ts); here a label set
// is made once, the first time it is counted.
import { Counter, type Registry } from 'prom-client';

export interface TalliedCounter<L extends string> {
  /** Adds `n` to the series `key` names; `labels` makes its label set the first time it is met. */
  add(key: string, labels: () => Record<L, string>, n?: number): void;
}

export function talliedCounter<L extends string>(config: { name: string; help: string; labelNames: readonly L[]; registers: Registry[] }): TalliedCounter<L> {
  const values = new Map<string, { labels: Record<L, string>; value: number }>();
  new Counter<L>({
    ...config,
    collect() {
      this.reset();
      for (const v of values.values()) this.inc(v.labels, v.value);
    },
  });
  return {
    add(key, labels, n = 1) {
      const v = values.get(key);
      if (v) v.value += n;
      else values.set(key, { labels: labels(), value: n });
    },
  };
}
