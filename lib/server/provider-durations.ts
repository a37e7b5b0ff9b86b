// The durations of each provider file as they are written ("60s", not 60000 ms), for /providers and
// the pauses' "max_wait" (DESIGN: The dashboard): the loader keeps only milliseconds, so the files
// are read again here. A duration the file does not set is the default, in the shortest form that
// states it (formatDuration), and marked as the default.
import 'server-only';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { ResolvedProvider } from '@/lib/engine/types';
import type { Project } from '@/lib/project';
import { formatDuration, parseDuration } from '@/lib/project/duration';
import { projectYamlFiles } from '@/lib/project/project-files';

/** The duration settings of a provider, by their YAML path. */
export const DURATION_KEYS = [
  'transport.budget',
  'transport.timeout',
  'transport.idle_timeout',
  'transport.try_deadline',
  'on_rate_limit.default_wait',
  'on_rate_limit.max_wait',
] as const;
export type DurationKey = (typeof DURATION_KEYS)[number];

export interface WrittenDuration {
  text: string;
  /** not set in the file: the built-in default */
  isDefault: boolean;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The durations of one provider as the page shows them. */
export function providerDurations(written: Partial<Record<DurationKey, string>> | undefined, p: ResolvedProvider): Record<DurationKey, WrittenDuration> {
  const ms: Record<DurationKey, number> = {
    'transport.budget': p.transport.budgetMs,
    'transport.timeout': p.transport.timeoutMs,
    'transport.idle_timeout': p.transport.idleTimeoutMs,
    'transport.try_deadline': p.transport.tryDeadlineMs,
    'on_rate_limit.default_wait': p.onRateLimit.defaultWaitMs,
    'on_rate_limit.max_wait': p.onRateLimit.maxWaitMs,
  };
  return Object.fromEntries(DURATION_KEYS.map((k) => [k, durationText(written, k, ms[k])])) as Record<DurationKey, WrittenDuration>;
}

/** provider name → the text each duration key has in its file (only the keys the file sets). */
export async function writtenDurations(project: Project): Promise<Map<string, Partial<Record<DurationKey, string>>>> {
  const out = new Map<string, Partial<Record<DurationKey, string>>>();
  for (const file of await projectYamlFiles(project.dir, 'providers')) {
    let doc: unknown;
    try {
      doc = parse(await readFile(join(project.dir, file), 'utf8'));
    } catch {
      continue; // the loader accepted the project as it was loaded; a file changed since is shown from the loaded values
    }
    if (!isObj(doc) || typeof doc.name !== 'string') continue;
    const written: Partial<Record<DurationKey, string>> = {};
    for (const key of DURATION_KEYS) {
      const [section, field] = key.split('.') as [string, string];
      const v = isObj(doc[section]) ? (doc[section] as Record<string, unknown>)[field] : undefined;
      if (typeof v === 'string') written[key] = v.trim();
    }
    out.set(doc.name, written);
  }
  return out;
}

/** The text to show for one duration: as written when the file's text states `ms`, else the shortest form, marked a default when unset. */
export function durationText(written: Partial<Record<DurationKey, string>> | undefined, key: DurationKey, ms: number): WrittenDuration {
  const text = written?.[key];
  if (text !== undefined && parseDuration(text) === ms) return { text, isDefault: false };
  return { text: formatDuration(ms), isDefault: text === undefined };
}
