// A throwaway Prometheus for tests (DESIGN: Observability, "Metrics"): Debian's `prometheus` binary
// (AQVEN_PROMETHEUS, PATH, or /usr/bin/prometheus; .ci/run installs it when missing) with its own
// temporary folder, a free port on 127.0.0.1 and a configuration the test writes — its scrape jobs,
// scraped every second — stopped and deleted by `stop()`; its HTTP API queried as a dashboard would.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './pg-cluster';

/** The one line a test fails with in CI when the binary is missing. */
export const PROMETHEUS_MISSING = 'prometheus not found (AQVEN_PROMETHEUS, PATH or /usr/bin/prometheus): install it with `apt-get install -y prometheus` (.ci/run does)';

/** The prometheus binary, or null. */
export function findPrometheus(): string | null {
  const candidates = [process.env.AQVEN_PROMETHEUS, ...(process.env.PATH ?? '').split(delimiter).map((d) => d && join(d, 'prometheus')), '/usr/bin/prometheus'];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // the next one
    }
  }
  return null;
}

export interface ScrapeJob {
  name: string;
  /** host:port */
  target: string;
  /** a bearer token Prometheus sends (its `authorization` block) */
  token?: string;
}

/** One sample of an instant query's answer. */
export interface Sampled {
  metric: Record<string, string>;
  value: number;
}

export interface Prometheus {
  url: string;
  /** An instant query (GET /api/v1/query): its vector's samples. */
  query(promql: string): Promise<Sampled[]>;
  /** The log Prometheus wrote (stderr), for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

const configOf = (jobs: ScrapeJob[]) =>
  [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    'scrape_configs:',
    ...jobs.flatMap((j) => [
      `  - job_name: ${JSON.stringify(j.name)}`,
      '    metrics_path: /metrics',
      ...(j.token ? ['    authorization:', `      credentials: ${JSON.stringify(j.token)}`] : []),
      '    static_configs:',
      `      - targets: [${JSON.stringify(j.target)}]`,
    ]),
    '',
  ].join('\n');

/** Starts Prometheus scraping `jobs` and resolves once it is ready (its /-/ready answers 200). */
export async function startPrometheus(bin: string, jobs: ScrapeJob[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'aqven-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, configOf(jobs));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    bin,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', '--storage.tsdb.retention.time=1h'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited (${child.exitCode}) before it was ready:\n${log}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    log: () => log,
    stop,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== 'success' || body.data?.resultType !== 'vector') throw new Error(`query ${promql} failed: ${body.error ?? JSON.stringify(body)}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
  };
}
