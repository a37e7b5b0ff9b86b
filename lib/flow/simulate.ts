// `--simulate` / AQVEN_SIMULATE=1 (DESIGN: The provider simulator): every provider of the project
// is routed to an in-process simulator playing the project's demo chaos profile and scripts, so
// the showcase runs with no API key.
import type { ResolvedProvider } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import { startSimulator } from '@/lib/sim';
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

/**
 * `seedOffset` varies the chaos between processes that each start a fresh simulator (every
 * `aqven run`), while keeping a given (seed, offset) reproducible.
 */
export async function simulateProject(project: Project, opts: { seedOffset?: number } = {}): Promise<SimulatedProviders> {
  const s = project.simulate;
  const sim = await startSimulator({
    scripts: s.scripts,
    chaos: s.chaos ? { ...s.chaos, seed: s.seed + (opts.seedOffset ?? 0) } : undefined,
    latency: s.latency,
  });
  return { sim, ...routeToSimulator(project, sim), close: () => sim.close() };
}
