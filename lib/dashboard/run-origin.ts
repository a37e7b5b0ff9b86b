// Who started a run and which version of the project it ran under, as the run page's header and
// `aqven show` print them (DESIGN: The run record; Storage, `runs.started_by`, `runs.project_hash`).
// Pure and type-only over db/, so the client header and the command share one wording.
import type { RunOrigin } from '@/db/queries';

/** a replay whose original run was purged, as the run list and `aqven show` mark it */
export const PURGED_ORIGINAL_REPLAY = 'replay (its original was purged)';

/** how many hex characters of the project hash stand for it where room is short (as git's short ids) */
export const SHORT_HASH_CHARS = 12;

export interface ProjectVersion {
  /** "snapshot #7" (PostgreSQL mode), else the hash's first SHORT_HASH_CHARS characters */
  label: string;
  /** the full sha256, for a title attribute; null when only the snapshot is known */
  hash: string | null;
}

/** The project version a run ran under, or null for a run recorded before it was kept. */
export function projectVersion(run: Partial<RunOrigin>): ProjectVersion | null {
  const hash = run.projectHash ?? null;
  if (run.snapshotId != null) return { label: `snapshot #${run.snapshotId}`, hash };
  if (hash) return { label: hash.slice(0, SHORT_HASH_CHARS), hash };
  return null;
}

/** One line of what is known of a run's origin — `started by cli:ana · project 3f2a…` — or null when nothing is. */
export function originLine(run: Partial<RunOrigin>): string | null {
  const version = projectVersion(run);
  const parts = [run.startedBy ? `started by ${run.startedBy}` : null, version ? `project ${version.label}` : null].filter((p): p is string => p !== null);
  return parts.length ? parts.join(' · ') : null;
}
