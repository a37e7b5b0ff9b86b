// Reading Prometheus's text exposition in tests (GET /metrics, lib/observe/metrics.ts): each sample
// as `name{labels}` and its value, and the samples of one metric as label sets.

/** `name{labels}` → value, of every sample of an exposition. */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` whose labels include `where`. */
export function series(s: Map<string, number>, name: string, where: Record<string, string> = {}): Sample[] {
  const out: Sample[] = [];
  for (const [k, value] of s) {
    const m = /^([a-z_]+)(?:\{(.*)\})?$/.exec(k);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (Object.entries(where).every(([l, v]) => labels[l] === v)) out.push({ labels, value });
  }
  return out;
}

export const total = (xs: readonly { value: number }[]) => xs.reduce((n, x) => n + x.value, 0);
