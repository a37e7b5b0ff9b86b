// The Audit page's URL: each filter read as the trail's filter, a bad value said (never read as
// "everything"), the cursor's round trip checked, and the links written back.
import { describe, expect, it } from 'vitest';
import { auditQueryString, decodeAuditCursor, encodeAuditCursor, parseAuditQuery } from './audit-filters';

const NOW = Date.UTC(2026, 11, 2, 12);
const DAY = 86_400_000;
const ID = '019ad7e2-1234-7abc-8def-0123456789ab';

describe('parseAuditQuery', () => {
  it('reads actor, kind, a relative range, or whole UTC days from/to (days win over the range)', () => {
    expect(parseAuditQuery({}, NOW)).toMatchObject({ ok: true, filter: { limit: 50 } });
    expect(parseAuditQuery({ actor: 'ana', kind: 'sign-in.failed', range: '24h' }, NOW)).toMatchObject({
      ok: true,
      filter: { actor: 'ana', kind: 'sign-in.failed', since: NOW - DAY },
    });
    expect(parseAuditQuery(new URLSearchParams('range=7d&from=2026-11-01&to=2026-11-30'), NOW)).toMatchObject({
      ok: true,
      filter: { since: Date.UTC(2026, 10, 1), until: Date.UTC(2026, 11, 1) },
    });
    expect(parseAuditQuery({ to: '2026-11-30' }, NOW)).toMatchObject({ ok: true, filter: { until: Date.UTC(2026, 11, 1) } });
    expect((parseAuditQuery({ to: '2026-11-30' }, NOW) as { filter: object }).filter).not.toHaveProperty('since');
  });

  it('says what is wrong with a kind, range, day or cursor it does not know', () => {
    expect(parseAuditQuery({ kind: 'everything' }, NOW)).toMatchObject({ ok: false, error: 'kind "everything" is not one the trail records' });
    expect(parseAuditQuery({ range: '1y' }, NOW)).toMatchObject({ ok: false, error: 'range must be one of 24h, 7d, 30d' });
    expect(parseAuditQuery({ from: '2026-02-30' }, NOW)).toMatchObject({ ok: false, error: 'from "2026-02-30" is not a day (YYYY-MM-DD)' });
    expect(parseAuditQuery({ from: '2026-12-02', to: '2026-12-01' }, NOW)).toMatchObject({ ok: false, error: 'from is after to: nothing can match' });
    expect(parseAuditQuery({ cursor: 'abc' }, NOW)).toMatchObject({ ok: false, error: expect.stringMatching(/^this page link is not one the Audit page handed out/) });
  });

  it('takes back the cursor it handed out, and nothing else', () => {
    const c = encodeAuditCursor({ at: NOW, id: ID });
    expect(decodeAuditCursor(c)).toEqual({ at: NOW, id: ID });
    expect(parseAuditQuery({ cursor: c }, NOW)).toMatchObject({ ok: true, filter: { before: { at: NOW, id: ID } } });
    for (const bad of ['', '.x', `0${c}`, `${c}x`, `zz.${ID}`.replace('zz', '-1'), `${NOW.toString(36)}.not-an-id`]) expect(decodeAuditCursor(bad), bad).toBeNull();
  });

  it('writes the links back without empty values', () => {
    expect(auditQueryString({ actor: 'token:ci', kind: '', range: '7d', from: '', to: '' })).toBe('actor=token%3Aci&range=7d');
    expect(auditQueryString({ actor: '', kind: '', range: '', from: '', to: '' }, 'c1')).toBe('cursor=c1');
  });
});
