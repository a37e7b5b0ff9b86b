// `aqven audit [--since 24h] [--kind K] [--actor A] [--limit N] [--json] [--project DIR]` (DESIGN:
// CLI; The dashboard, "Audit trail"): the security events, newest first — when (UTC), kind, actor,
// address, target, detail — from the run database (AQVEN_DATABASE_URL when set, else the SQLite file
// the project names). Exit statuses: 0 (also when nothing matches), 2 bad usage (a period that is
// not one, an unknown kind, a bad limit, a project failing check), 3 the database cannot be opened.
import type { Command } from 'commander';
import { AUDIT_KINDS, AUDIT_PAGE_MAX, isAuditKind, listAudit, type AuditFilter, type AuditRow } from '@/db/audit-queries';
import { parseDuration } from '@/lib/project/duration';
import { type CliIo, processIo } from './io';
import { printable } from './printable';
import { UsageError } from './usage-error';
import { accountFailure, withAccountsDb, type AccountCommandOptions } from './users';
import { PROJECT_OPTION } from './project-dir';

export const AUDIT_DEFAULT_LIMIT = 50;

export interface AuditCommandOptions extends AccountCommandOptions {
  /** a period back from now ("24h", "7d") or an ISO 8601 time */
  since?: string;
  kind?: string;
  actor?: string;
  limit?: string | number;
  json?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The filter the options ask for; a UsageError says which option is wrong and what it takes. */
export function auditFilterOf(opts: AuditCommandOptions, now: number): AuditFilter {
  const f: AuditFilter = { limit: AUDIT_DEFAULT_LIMIT };
  if (opts.since !== undefined) {
    const text = opts.since.trim();
    const ms = parseDuration(text, { days: true });
    const at = /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : NaN;
    if (ms !== null && ms > 0) f.since = now - ms;
    else if (Number.isFinite(at)) f.since = at;
    else throw new UsageError(`--since "${opts.since}" is neither a period (24h, 7d, 30m: units d, h, m minutes, s, ms) nor an ISO 8601 time (2026-12-01T09:00:00Z)`);
  }
  if (opts.kind !== undefined) {
    if (!isAuditKind(opts.kind)) throw new UsageError(`--kind must be one of ${AUDIT_KINDS.join(', ')}; got "${opts.kind}"`);
    f.kind = opts.kind;
  }
  if (opts.actor !== undefined && opts.actor !== '') f.actor = opts.actor;
  if (opts.limit !== undefined) {
    const n = Number(opts.limit);
    if (!Number.isInteger(n) || n < 1 || n > AUDIT_PAGE_MAX) throw new UsageError(`--limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}, got "${opts.limit}"`);
    f.limit = n;
  }
  return f;
}

/** The detail as `key=value` pairs on one line. */
function detailText(d: AuditRow['detail']): string {
  if (!d) return '';
  return Object.entries(d)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}

/** One line per event under a header; every stored text escaped (printable) as the CLI prints stored text. */
export function formatAudit(rows: AuditRow[], more: boolean): string {
  if (rows.length === 0) return 'no events match';
  const table = [
    ['AT', 'KIND', 'ACTOR', 'ADDRESS', 'TARGET', 'DETAIL'],
    ...rows.map((r) => [iso(r.at), r.kind, r.actor ?? '-', r.address ?? '-', r.target ?? '-', detailText(r.detail)].map((cell) => printable(cell))),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const lines = table.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  if (more) lines.push(`(the newest ${rows.length}; older events match too: narrow --since, --kind or --actor, or raise --limit up to ${AUDIT_PAGE_MAX})`);
  return lines.join('\n');
}

/** `aqven audit`: the events, newest first. */
export async function runAudit(opts: AuditCommandOptions, io: CliIo = processIo): Promise<number> {
  let filter: AuditFilter;
  try {
    // bad options are said before the database is opened
    filter = auditFilterOf(opts, (opts.now ?? Date.now)());
  } catch (err) {
    return accountFailure('audit', err, io);
  }
  return withAccountsDb('audit', opts, io, async (db) => {
    const { rows, next } = await listAudit(db, filter);
    if (opts.json) {
      const events = rows.map((r) => ({ at: iso(r.at), kind: r.kind, actor: r.actor, address: r.address, target: r.target, detail: r.detail }));
      io.out(`${JSON.stringify({ events, more: next !== null }, null, 2)}\n`);
    } else io.out(`${formatAudit(rows, next !== null)}\n`);
    return 0;
  });
}

export function registerAudit(program: Command, io: CliIo = processIo): Command {
  return program
    .command('audit')
    .description('the audit trail, newest first: sign-ins, password and user changes, tokens, policy saves, project pushes, replay batches, cleared pauses')
    .option('--since <period>', 'only events this recent: 24h, 7d, 30m (units d, h, m minutes, s, ms), or an ISO 8601 time')
    .option('--kind <kind>', `only this kind: ${AUDIT_KINDS.join(', ')}`)
    .option('--actor <actor>', 'only this actor: a user name, token:NAME or cli:LOGIN')
    .option('--limit <n>', `at most this many events, 1-${AUDIT_PAGE_MAX}`, String(AUDIT_DEFAULT_LIMIT))
    .option('--json', 'print JSON: { events, more }')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (opts: AuditCommandOptions & { project?: string }) => io.exit(await runAudit(opts, io)));
}
