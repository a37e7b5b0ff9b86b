// `--simulate` / AQVEN_SIMULATE=1 (DESIGN: The provider simulator): every provider of the project
// is routed to an in-process simulator playing the project's demo chaos profile and scripts, so
// the showcase runs with no API key — or, with AQVEN_SIM_URL, to the one simulator a cluster of
// processes shares (`aqven sim`), so a demo cluster behaves like one provider.
import type { ResolvedProvider } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import { simBaseUrl, startSimulator } from '@/lib/sim';
import type { Dialect, SimServer } from '@/lib/sim/types';

export interface SimulatedProviders {
  sim: SimServer;
  providers: Record<string, ResolvedProvider>;
  /** placeholder keys so adapters have something to send; never a real key */
  env: Record<string, string | undefined>;
  close(): Promise<void>;
}

/**
 * Whether providers are simulated: `flag` (the CLI's --simulate) or AQVEN_SIMULATE set to 1 or
 * true. The one rule for the CLI and the dashboard's server, so both read the variable alike.
 */
export function simulateRequested(flag?: boolean): boolean {
  const v = process.env.AQVEN_SIMULATE;
  return !!flag || v === '1' || v === 'true';
}

function dialectOf(p: ResolvedProvider): Dialect {
  if (p.api === 'anthropic') return 'anthropic';
  if (p.api === 'gemini') return 'gemini';
  return p.name === 'openrouter' || /openrouter\.ai/.test(p.baseUrl) ? 'openrouter' : 'openai';
}

/** Providers of `project` pointed at `sim`, keys replaced by placeholders. */
export function routeToSimulator(project: Project, sim: SimServer): Pick<SimulatedProviders, 'providers' | 'env'> {
  const providers: Record<string, ResolvedProvider> = {};
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [name, p] of Object.entries(project.providers)) {
    providers[name] = { ...p, baseUrl: sim.baseUrl(dialectOf(p)) };
    if (p.apiKeyEnv) env[p.apiKeyEnv] = 'simulated-key';
  }
  return { providers, env };
}

/** AQVEN_SIM_URL is not an http(s) URL. */
export class SimUrlError extends Error {
  constructor(value: string) {
    super(`AQVEN_SIM_URL must be the http:// URL a simulator listens on (as \`aqven sim\` prints it), got ${JSON.stringify(value.slice(0, 200))}`);
    this.name = 'SimUrlError';
  }
}

/** The shared simulator's URL from AQVEN_SIM_URL, without a trailing slash; null when unset. Throws SimUrlError when it is no http(s) URL. */
export function sharedSimulatorUrl(env: Record<string, string | undefined> = process.env): string | null {
  const raw = env.AQVEN_SIM_URL?.trim();
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new SimUrlError(raw);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash) throw new SimUrlError(raw);
  return raw.replace(/\/+$/, '');
}

/**
 * The simulator at `url`, run by another process (`aqven sim`): providers are pointed at it, its
 * scripts and chaos are changed through its control endpoints (sent, not awaited), and closing it
 * leaves it running — it is not ours. Its request log stays there (`GET url/_sim/requests`).
 */
export function remoteSimulator(url: string): SimServer {
  const post = (path: string, body: unknown) =>
    void fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).catch(() => undefined);
  const u = new URL(url);
  return {
    url,
    port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80),
    baseUrl: (dialect) => simBaseUrl(url, dialect),
    loadScripts: (scripts) => post('/_sim/scripts', scripts),
    setChaos: (chaos) => post('/_sim/chaos', chaos ?? null),
    requests: () => {
      throw new Error(`the simulator at ${url} is another process's: read its request log at ${url}/_sim/requests`);
    },
    reset: () => post('/_sim/reset', {}),
    close: async () => {},
  };
}

/**
 * `seedOffset` varies the chaos between processes that each start a fresh simulator (every
 * `aqven run`), while keeping a given (seed, offset) reproducible. With AQVEN_SIM_URL set, no
 * simulator is started: the providers go to that one, which plays its own scripts and chaos (the
 * project's `simulate:` block is not sent to it).
 */
export async function simulateProject(project: Project, opts: { seedOffset?: number; env?: Record<string, string | undefined> } = {}): Promise<SimulatedProviders> {
  const shared = sharedSimulatorUrl(opts.env);
  if (shared) {
    const sim = remoteSimulator(shared);
    return { sim, ...routeToSimulator(project, sim), close: () => sim.close() };
  }
  const s = project.simulate;
  const sim = await startSimulator({
    scripts: s.scripts,
    chaos: s.chaos ? { ...s.chaos, seed: s.seed + (opts.seedOffset ?? 0) } : undefined,
    latency: s.latency,
    limits: s.limits,
    // a model's limits are a property of the project's seed, the same in every run
    limitsSeed: s.seed,
  });
  return { sim, ...routeToSimulator(project, sim), close: () => sim.close() };
}
