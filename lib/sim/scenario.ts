// A scenario file (YAML or JSON) for `aqven sim --scenario FILE`: scripts, chaos and latency.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { ChaosProfile, Latency, ScriptMap } from './types';
import { validateChaos, validateLatency, validateScripts } from './validate';

export interface Scenario {
  scripts?: ScriptMap;
  chaos?: ChaosProfile;
  latency?: Latency;
}

/** Parses and validates a scenario; errors name the file and every problem found. */
export function parseScenario(text: string, file: string): Scenario {
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new Error(`${file}: cannot parse: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file}: must be a mapping with scripts, chaos and/or latency`);
  const d = doc as Record<string, unknown>;
  const errs: string[] = [];
  for (const k of Object.keys(d)) if (k !== 'scripts' && k !== 'chaos' && k !== 'latency') errs.push(`${k}: unknown key (expected scripts, chaos, latency)`);
  if (d.scripts !== undefined) errs.push(...validateScripts(d.scripts));
  errs.push(...validateChaos(d.chaos), ...validateLatency(d.latency));
  if (errs.length > 0) throw new Error(`${file}: invalid scenario:\n  ${errs.join('\n  ')}`);
  return {
    scripts: d.scripts as ScriptMap | undefined,
    chaos: (d.chaos ?? undefined) as ChaosProfile | undefined,
    latency: d.latency as Latency | undefined,
  };
}

export async function loadScenario(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseScenario(text, file);
}
