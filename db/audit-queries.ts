// The audit trail (DESIGN: The dashboard, "Audit trail"): security events, append-only, on both
// dialects. The one home of their kinds and of what a row may hold: every door (server actions,
// route handlers, the CLI) records through recordAuditOrWarn (after its change, never failing it),
// and nothing here updates a row; only retention (`aqven runs purge`) deletes the old ones. A
// detail never carries a password, a token or a key: callers pass names and counts, and each text
// is scrubbed before it is stored (a secret-named key's value dropped, secrets and PII replaced).
import { and, asc, count, desc, eq, gte, isNotNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { redactText } from '@/lib/redact';
import { newRecordId } from '@/lib/shared/record-id';
import { queryErrorText } from './pg';
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
/** a detail holds a few facts: more keys than this are dropped (the event still says what happened) */
const DETAIL_KEYS = 20;

const clip = (s: string | null | undefined, max = FIELD_MAX): string | null => (s == null ? null : s.length > max ? `${s.slice(0, max)}…` : s);

/**
 * What a secret looks like wherever it was pasted: an AQVEN token, an `Authorization: Bearer …`
 * value, a provider key (`sk-…`, `sk-or-v1-…`, `pk-…`, `rk-…`), and a `password=…` pair.
 */
const SECRET_PATTERNS = [/aqven_[A-Za-z0-9_-]{16,}/, /\bBearer\s+\S+/i, /\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}/, /\b(?:password|passwd|secret)\s*[=:]\s*\S+/i];
/** detail keys whose value is a secret by its name: dropped whatever it holds */
const SECRET_KEY = /password|passwd|passphrase|secret|credential|^(?:token|key|api[-_]?key|authorization|cookie|hash|bearer)$/i;
export const AUDIT_SECRET = '<SECRET>';

/** an id we made (a UUID, a failure signature's 16 hex digits): kept as it is, a detector would take its digits for a card or a phone */
const OUR_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16})$/i;

/** A detail's text with the secrets above and the five detectors' matches (emails, IBANs, cards, phones, IPs) replaced. */
function scrub(text: string): string {
  return OUR_ID.test(text) ? text : redactText(text, { extraPatterns: SECRET_PATTERNS, placeholder: AUDIT_SECRET });
}

/** A name we gave (user, agent, model, batch id): only what looks like a secret goes; a detector would take an id's digits for a phone. */
function scrubSecrets(text: string): string {
  return SECRET_PATTERNS.reduce((t, re) => t.replace(new RegExp(re.source, `${re.flags}g`), AUDIT_SECRET), text);
}

/** The detail as stored: at most DETAIL_KEYS facts, each string scrubbed and clipped, a secret-named key's value dropped; JSON of at most DETAIL_MAX characters. */
function storedDetail(detail: AuditEvent['detail']): string | null {
  if (!detail) return null;
  const kept: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(detail).slice(0, DETAIL_KEYS)) {
    const key = clip(k, 40)!;
    if (SECRET_KEY.test(k)) kept[key] = AUDIT_SECRET;
    else if (typeof v === 'string') kept[key] = clip(scrub(v));
    else if (typeof v === 'number') kept[key] = Number.isFinite(v) ? v : null;
    else kept[key] = typeof v === 'boolean' ? v : null;
  }
  const text = JSON.stringify(kept);
  return text.length > DETAIL_MAX ? clip(text, DETAIL_MAX) : text;
}

/**
 * Appends one event at `now`. The target is scrubbed of secrets, the detail as
 * storedDetail says; every field is capped. Throws when the row cannot be written (see
 * recordAuditOrWarn for the doors).
 */
export async function recordAudit(db: Db, e: AuditEvent, now: number = Date.now()): Promise<void> {
  await db.q.insert(db.t.auditEvents).values({
    id: newRecordId(),
    at: now,
    kind: e.kind,
    actor: clip(e.actor),
    address: clip(e.address ?? null, 64),
    target: e.target == null ? null : clip(scrubSecrets(e.target)),
    detail: storedDetail(e.detail),
  });
}

/**
 * How every door records (DESIGN: The dashboard, "Audit trail"): after the change the event tells
 * of was made, never undoing or failing it — the change is done, and an error would have the person
 * make it again. A row that cannot be written is said through `warn` (the server's log, the CLI's
 * stderr), never swallowed; answers whether it was written.
 */
export async function recordAuditOrWarn(db: Db, e: AuditEvent, warn: (line: string) => void, now: number = Date.now()): Promise<boolean> {
  try {
    await recordAudit(db, e, now);
    return true;
  } catch (err) {
    // the database's reason, never drizzle's "Failed query: <SQL> params: <values>"
    const why = queryErrorText(err);
    warn(`the audit trail could not record ${e.kind}${e.target ? ` of ${clip(scrubSecrets(e.target), 80)}` : ''} by ${e.actor ?? 'nobody signed in'}: ${why}`);
    return false;
  }
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

/** The actors the trail names, in order (the Audit page's filter); at most `limit`. */
export async function auditActors(db: Db, limit = 200): Promise<string[]> {
  const a = db.t.auditEvents;
  const rows = await db.q.selectDistinct({ actor: a.actor }).from(a).where(isNotNull(a.actor)).orderBy(asc(a.actor)).limit(limit);
  return rows.map((r) => r.actor!);
}

/**
 * Deletes the events older than `cutoff` (retention, beside `runs purge`); returns how many.
 * `dryRun` counts them and deletes nothing.
 */
export async function purgeAudit(db: Db, cutoff: number, opts: { dryRun?: boolean } = {}): Promise<number> {
  const a = db.t.auditEvents;
  const old = lt(a.at, cutoff);
  if (opts.dryRun) return Number((await db.q.select({ n: count() }).from(a).where(old))[0]?.n ?? 0);
  return (
    await db.q
      .delete(a)
      .where(old)
      .returning({ one: sql`1` })
  ).length;
}
