// The audit trail (DESIGN: The dashboard, "Audit trail"): security events, append-only, on both
// dialects. The one home of their kinds and of what a row may hold: every door (server actions,
// route handlers, the CLI) records through recordAudit, and nothing here updates a row; only
// retention (`aqven runs purge`) deletes the old ones. A detail never carries a password, a token
// or a key: callers pass names and counts, and the text is redacted before it is stored.
import { and, desc, eq, gte, lt, lte, or, type SQL } from 'drizzle-orm';
import { redactText } from '@/lib/redact';
import { newRecordId } from '@/lib/shared/record-id';
import type { Db } from './types';

/** Every kind of event the trail records; a new one is added here first. */
export const AUDIT_KINDS = [
  'sign-in.ok',
  'sign-in.failed',
  'sign-out',
  'password.changed',
  'password.reset',
  'user.added',
  'user.removed',
  'user.role-changed',
  'user.budget-set',
  'token.created',
  'token.revoked',
  'token.used-after-expiry',
  'budget.exceeded',
  'policy.saved',
  'project.pushed',
  'replay-batch.started',
  'pause.cleared',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export function isAuditKind(s: string): s is AuditKind {
  return (AUDIT_KINDS as readonly string[]).includes(s);
}

export interface AuditEvent {
  kind: AuditKind;
  /** a user's name, `token:<name>`, `cli:<login>`, or null when nobody is signed in */
  actor: string | null;
  address?: string | null;
  target?: string | null;
  /** a few facts (names, counts, amounts): never a password, token or key */
  detail?: Record<string, string | number | boolean | null> | null;
}

export interface AuditRow {
  id: string;
  at: number;
  kind: string;
  actor: string | null;
  address: string | null;
  target: string | null;
  detail: Record<string, unknown> | null;
}

const FIELD_MAX = 200;
const DETAIL_MAX = 2_000;

const clip = (s: string | null | undefined, max = FIELD_MAX): string | null => (s == null ? null : s.length > max ? `${s.slice(0, max)}…` : s);

/** Appends one event at `now`. The detail is redacted (the five detectors) and capped. */
export async function recordAudit(db: Db, e: AuditEvent, now: number = Date.now()): Promise<void> {
  const detail = e.detail ? clip(redactText(JSON.stringify(e.detail)), DETAIL_MAX) : null;
  await db.q.insert(db.t.auditEvents).values({
    id: newRecordId(),
    at: now,
    kind: e.kind,
    actor: clip(e.actor),
    address: clip(e.address ?? null, 64),
    target: clip(e.target ?? null),
    detail,
  });
}

export interface AuditFilter {
  actor?: string;
  kind?: string;
  /** ms, inclusive */
  since?: number;
  /** ms, exclusive */
  until?: number;
  /** the page's last row (newest first): rows strictly older come next */
  before?: { at: number; id: string };
  /** rows per page, 1..500 (default 50) */
  limit?: number;
}

export const AUDIT_PAGE_MAX = 500;

/** Events newest first, filtered, one page; `next` is the cursor of the following page, or null at the end. */
export async function listAudit(db: Db, f: AuditFilter = {}): Promise<{ rows: AuditRow[]; next: { at: number; id: string } | null }> {
  const a = db.t.auditEvents;
  const limit = Math.min(Math.max(1, Math.trunc(f.limit ?? 50)), AUDIT_PAGE_MAX);
  const where: SQL[] = [];
  if (f.actor) where.push(eq(a.actor, f.actor));
  if (f.kind) where.push(eq(a.kind, f.kind));
  if (f.since !== undefined) where.push(gte(a.at, f.since));
  if (f.until !== undefined) where.push(lt(a.at, f.until));
  if (f.before) where.push(or(lt(a.at, f.before.at), and(eq(a.at, f.before.at), lt(a.id, f.before.id)))!);
  const found = await db.q
    .select()
    .from(a)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(a.at), desc(a.id))
    .limit(limit + 1);
  const rows = found.slice(0, limit).map((r) => ({ ...r, detail: parseDetail(r.detail) }));
  const last = rows[rows.length - 1];
  return { rows, next: found.length > limit && last ? { at: last.at, id: last.id } : null };
}

function parseDetail(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { text };
  } catch {
    return { text }; // capped mid-way: shown as written
  }
}

/** Deletes the events older than `cutoff` (retention, beside `runs purge`); returns how many. */
export async function purgeAudit(db: Db, cutoff: number): Promise<number> {
  const a = db.t.auditEvents;
  const gone = await db.q.delete(a).where(lte(a.at, cutoff - 1)).returning({ id: a.id });
  return gone.length;
}
