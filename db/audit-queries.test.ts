// The audit trail on both dialects (DESIGN: The dashboard, "Audit trail"): newest first with a
// cursor that neither skips nor repeats an event, filters by actor, kind and time, a detail that
// never keeps a secret, recording that warns instead of failing its action, and retention.
import { beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, withTestDb } from '../test/helpers/dialects';
import { AUDIT_SECRET, auditActors, listAudit, purgeAudit, recordAudit, recordAuditOrWarn, type AuditRow } from './audit-queries';
import { purgeRuns } from './purge';
import type { Db } from './types';

const T0 = Date.UTC(2026, 11, 1, 9);
const MINUTE = 60_000;
const DAY = 86_400_000;
const TOKEN = `aqven_${'x'.repeat(43)}`;

describe.each(DIALECTS)('the audit trail on %s', (dialect) => {
  let db: Db;
  withTestDb(dialect, (t) => {
    db = t.db;
  });
  beforeEach(async () => {
    await db.q.delete(db.t.auditEvents);
  });

  /** every page of a listing, following the cursor to the end */
  const allPages = async (f: Parameters<typeof listAudit>[1] = {}) => {
    const pages: AuditRow[][] = [];
    let before: { at: number; id: string } | undefined;
    for (;;) {
      const page = await listAudit(db, { ...f, before });
      pages.push(page.rows);
      if (!page.next) return pages;
      before = page.next;
    }
  };

  it('lists newest first, pages by the cursor without skipping or repeating an event (several in the same millisecond too)', async () => {
    for (let i = 0; i < 7; i++) await recordAudit(db, { kind: 'sign-in.ok', actor: `u${i}`, target: `u${i}` }, T0 + Math.floor(i / 2) * MINUTE);
    const pages = await allPages({ limit: 3 });
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    const actors = pages.flat().map((r) => r.actor);
    expect(new Set(actors).size).toBe(7);
    const ats = pages.flat().map((r) => r.at);
    expect(ats).toEqual([...ats].sort((a, b) => b - a));
    // within one millisecond, the later-recorded event first (ids made later sort after)
    expect(actors.slice(-3)).toEqual(['u2', 'u1', 'u0']);
    const last = await listAudit(db, { limit: 7 });
    expect(last.next).toBeNull();
  });

  it('filters by actor, kind and time range (since inclusive, until exclusive), and lists the actors', async () => {
    await recordAudit(db, { kind: 'sign-in.ok', actor: 'ana', address: '203.0.113.5', target: 'ana' }, T0);
    await recordAudit(db, { kind: 'policy.saved', actor: 'ana', target: 'classifier', detail: { revision: 3 } }, T0 + MINUTE);
    await recordAudit(db, { kind: 'sign-in.failed', actor: null, address: '198.51.100.9', target: 'bob' }, T0 + 2 * MINUTE);
    await recordAudit(db, { kind: 'user.added', actor: 'cli:ops', target: 'cy', detail: { role: 'viewer' } }, T0 + 3 * MINUTE);
    const kinds = async (f: Parameters<typeof listAudit>[1]) => (await listAudit(db, f)).rows.map((r) => r.kind);

    expect(await kinds({ actor: 'ana' })).toEqual(['policy.saved', 'sign-in.ok']);
    expect(await kinds({ kind: 'sign-in.failed' })).toEqual(['sign-in.failed']);
    expect(await kinds({ since: T0 + MINUTE, until: T0 + 3 * MINUTE })).toEqual(['sign-in.failed', 'policy.saved']);
    expect(await kinds({ actor: 'ana', kind: 'sign-in.ok', since: T0 })).toEqual(['sign-in.ok']);
    expect(await kinds({ actor: 'nobody-like-this' })).toEqual([]);

    const [saved] = (await listAudit(db, { kind: 'policy.saved' })).rows;
    expect(saved).toEqual({ id: expect.any(String), at: T0 + MINUTE, kind: 'policy.saved', actor: 'ana', address: null, target: 'classifier', detail: { revision: 3 } });
    expect((await listAudit(db, { kind: 'sign-in.ok' })).rows[0]!.address).toBe('203.0.113.5');
    expect(await auditActors(db)).toEqual(['ana', 'cli:ops']);
  });

  it('never keeps a secret: a secret-named key loses its value, tokens, keys and bearer values in any text are replaced, PII is redacted, ids are kept', async () => {
    await recordAudit(
      db,
      {
        kind: 'user.added',
        actor: 'cli:ops',
        target: `bob ${TOKEN}`,
        detail: {
          password: 'hunter2 hunter2',
          newPassword: 'correct horse battery',
          token: 'anything at all',
          note: `pasted ${TOKEN} and Bearer abc.def and sk-or-v1-${'a'.repeat(32)} by mistake`,
          contact: 'write to ana@example.com',
          group: '0123456789012345',
          batch: '019ad7e2-1234-7abc-8def-012345678901',
          sessionsSignedOut: 2,
          generated: true,
        },
      },
      T0,
    );
    const [row] = (await listAudit(db)).rows;
    expect(row!.target).toBe(`bob ${AUDIT_SECRET}`);
    expect(row!.detail).toEqual({
      password: AUDIT_SECRET,
      newPassword: AUDIT_SECRET,
      token: AUDIT_SECRET,
      note: `pasted ${AUDIT_SECRET} and ${AUDIT_SECRET} and ${AUDIT_SECRET} by mistake`,
      contact: 'write to <EMAIL>',
      group: '0123456789012345',
      batch: '019ad7e2-1234-7abc-8def-012345678901',
      sessionsSignedOut: 2,
      generated: true,
    });
    const stored = JSON.stringify(await db.q.select().from(db.t.auditEvents));
    for (const secret of ['hunter2', 'correct horse', 'anything at all', TOKEN, 'abc.def', 'sk-or-v1', 'ana@example.com']) expect(stored).not.toContain(secret);
  });

  it('caps what a row holds: long texts are clipped, a detail keeps at most 20 facts', async () => {
    const detail = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, 'v'.repeat(500)]));
    await recordAudit(db, { kind: 'project.pushed', actor: 'a'.repeat(500), target: 't'.repeat(500), detail }, T0);
    const [row] = (await listAudit(db)).rows;
    expect(row!.actor).toHaveLength(201);
    expect(row!.target).toHaveLength(201);
    expect(Object.keys(row!.detail ?? {}).length).toBeLessThanOrEqual(20);
    const stored = (await db.q.select({ d: db.t.auditEvents.detail }).from(db.t.auditEvents))[0]!.d!;
    expect(stored.length).toBeLessThanOrEqual(2_001);
  });

  it('recordAuditOrWarn: a row that cannot be written is said, never thrown (the action it records stands)', async () => {
    const said: string[] = [];
    expect(await recordAuditOrWarn(db, { kind: 'pause.cleared', actor: 'ed', target: 'openai:gpt' }, (l) => said.push(l), T0)).toBe(true);
    expect(said).toEqual([]);
    // a database the row cannot go into: a query builder that refuses every write
    const broken = { ...db, q: { insert: () => ({ values: () => Promise.reject(new Error('disk I/O error')) }) } } as unknown as Db;
    expect(await recordAuditOrWarn(broken, { kind: 'user.removed', actor: 'cli:ops', target: `bob ${TOKEN}` }, (l) => said.push(l), T0)).toBe(false);
    expect(said).toEqual([`the audit trail could not record user.removed of bob ${AUDIT_SECRET} by cli:ops: disk I/O error`]);
  });

  it('purgeAudit deletes the events before the cutoff (a dry run counts them), and runs purge reports them', async () => {
    for (const [i, at] of [T0 - 100 * DAY, T0 - 91 * DAY, T0 - 90 * DAY, T0 - DAY].entries()) await recordAudit(db, { kind: 'sign-out', actor: `u${i}` }, at);
    const cutoff = T0 - 90 * DAY;
    expect(await purgeAudit(db, cutoff, { dryRun: true })).toBe(2);
    expect((await listAudit(db)).rows).toHaveLength(4);
    const res = await purgeRuns(db, { cutoff });
    expect(res.deleted.auditEvents).toBe(2);
    // the event at the cutoff itself stays (strictly older ones go)
    expect((await listAudit(db)).rows.map((r) => r.actor)).toEqual(['u3', 'u2']);
    expect(await purgeAudit(db, cutoff)).toBe(0);
  });
});
