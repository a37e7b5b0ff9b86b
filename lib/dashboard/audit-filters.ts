// The Audit page's filters as URL query parameters (DESIGN: The dashboard, "Audit trail"): actor,
// kind, a time range (last 24 h, 7 d, 30 d, or all) or a from/to day, and the cursor of the page —
// every view is a URL an admin can paste into an incident note.
import { AUDIT_KINDS, isAuditKind, type AuditFilter, type AuditKind } from '@/db/audit-queries';

export const AUDIT_RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type AuditRange = keyof typeof AUDIT_RANGES;
export const AUDIT_RANGE_LABELS: Record<AuditRange, string> = { '24h': 'last 24 hours', '7d': 'last 7 days', '30d': 'last 30 days' };

/** rows per page */
export const AUDIT_PAGE = 50;

/** What each kind means, in a few words (the page's column; the CLI prints the kind itself). */
export const AUDIT_KIND_LABELS: Record<AuditKind, string> = {
  'sign-in.ok': 'signed in',
  'sign-in.failed': 'sign-in refused',
  'sign-out': 'signed out',
  'password.changed': 'changed their password',
  'password.reset': 'password reset',
  'user.added': 'user added',
  'user.removed': 'user removed',
  'user.role-changed': 'role changed',
  'user.budget-set': 'budget set',
  'token.created': 'token created',
  'token.revoked': 'token revoked',
  'token.used-after-expiry': 'expired token used',
  'budget.exceeded': 'budget exceeded',
  'policy.saved': 'policy saved',
  'project.pushed': 'project pushed',
  'replay-batch.started': 'replay batch started',
  'pause.cleared': 'pause cleared',
};

/** kinds that say something was refused: marked on the page */
export const AUDIT_REFUSALS: ReadonlySet<string> = new Set(['sign-in.failed', 'token.used-after-expiry', 'budget.exceeded']);

export { AUDIT_KINDS };

/** The query parameters the page reads, as its links write them. */
export interface AuditQuery {
  actor: string;
  kind: string;
  range: string;
  /** YYYY-MM-DD (UTC), inclusive */
  from: string;
  /** YYYY-MM-DD (UTC), inclusive */
  to: string;
}

/** Opaque cursor: the last row's (at, id), newest first. */
export function encodeAuditCursor(c: { at: number; id: string }): string {
  return `${c.at.toString(36)}.${c.id}`;
}

/** A cursor encodeAuditCursor made, decoded; null for anything else (the round trip is checked). */
export function decodeAuditCursor(s: string): { at: number; id: string } | null {
  const dot = s.indexOf('.');
  if (dot <= 0) return null;
  const at = parseInt(s.slice(0, dot), 36);
  const id = s.slice(dot + 1);
  if (!Number.isSafeInteger(at) || at < 0 || !/^[0-9a-f-]{36}$/.test(id)) return null;
  const c = { at, id };
  return encodeAuditCursor(c) === s ? c : null;
}

const DAY = /^(\d{4})-(\d\d)-(\d\d)$/;
const DAY_MS = 86_400_000;

/** A YYYY-MM-DD day's first millisecond (UTC), or null when it is no day. */
function dayStart(s: string): number | null {
  const m = DAY.exec(s);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(ms).toISOString().slice(0, 10) === s ? ms : null;
}

type Params = URLSearchParams | Record<string, string | string[] | undefined>;

function read(params: Params, key: string): string {
  const v = params instanceof URLSearchParams ? params.get(key) : params[key];
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' ? one.trim() : '';
}

export type ParsedAuditQuery = { ok: true; values: AuditQuery; filter: AuditFilter } | { ok: false; values: AuditQuery; error: string };

/**
 * The filter a URL asks for. `from`/`to` (whole UTC days) win over `range`; an unknown kind, range,
 * day or cursor is said, never read as "everything".
 */
export function parseAuditQuery(params: Params, now = Date.now()): ParsedAuditQuery {
  const values: AuditQuery = { actor: read(params, 'actor'), kind: read(params, 'kind'), range: read(params, 'range'), from: read(params, 'from'), to: read(params, 'to') };
  const refused = (error: string): ParsedAuditQuery => ({ ok: false, values, error });
  const filter: AuditFilter = { limit: AUDIT_PAGE };
  if (values.actor) filter.actor = values.actor;
  if (values.kind) {
    if (!isAuditKind(values.kind)) return refused(`kind "${values.kind}" is not one the trail records`);
    filter.kind = values.kind;
  }
  if (values.range) {
    if (!Object.hasOwn(AUDIT_RANGES, values.range)) return refused(`range must be one of ${Object.keys(AUDIT_RANGES).join(', ')}`);
    filter.since = now - AUDIT_RANGES[values.range as AuditRange];
  }
  if (values.from) {
    const ms = dayStart(values.from);
    if (ms === null) return refused(`from "${values.from}" is not a day (YYYY-MM-DD)`);
    filter.since = ms;
  }
  if (values.to) {
    const ms = dayStart(values.to);
    if (ms === null) return refused(`to "${values.to}" is not a day (YYYY-MM-DD)`);
    filter.until = ms + DAY_MS;
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) return refused('from is after to: nothing can match');
  const cursor = read(params, 'cursor');
  if (cursor) {
    const before = decodeAuditCursor(cursor);
    if (!before) return refused('this page link is not one the Audit page handed out: start again from the newest events');
    filter.before = before;
  }
  return { ok: true, values, filter };
}

/** The query string of a view (empty values left out), with a cursor for a later page. */
export function auditQueryString(values: AuditQuery, cursor?: string | null): string {
  const q = new URLSearchParams();
  for (const k of ['actor', 'kind', 'range', 'from', 'to'] as const) if (values[k]) q.set(k, values[k]);
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}
