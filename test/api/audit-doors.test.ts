// The dashboard's doors to the audit trail (DESIGN: The dashboard, "Audit trail"), called as the
// browser calls them: sign-in (succeeded, refused), sign-out, a password change, a policy save and a
// cleared pause each record one event with its actor and the address `aqven serve` stamped; a
// refused action records nothing, a name no account has is never stored, no password is; and the
// Audit page lets admins only in. Over the showcase's SQLite file, the simulator standing for the
// providers; the password checks are real (better-auth's scrypt).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@/db/account-queries';
import { listAudit, type AuditRow } from '@/db/audit-queries';
import type { Db } from '@/db/types';
import type { PasswordState, SignInState } from '@/lib/forms/auth';
import { peerStamp } from '@/lib/shared/peer';
import { LOCAL_HEADERS, request as req } from '../helpers/next-headers';
import { follow } from '../helpers/next-navigation';
import { saveEnv } from '../helpers/saved-env';
import { requestHeaders, sessionCookie } from '../helpers/session-cookie';
import { copyShowcase } from '../helpers/showcase';

// the request the server code answers (../helpers/next-headers.ts) until a test names another
req.headers = {};

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
const PASSWORD = 'the team password, long enough';
const NEW_PASSWORD = 'a newer password, long enough';
/** the client's address as `aqven serve` stamps it (another machine on the team's network) */
const ADDRESS = '192.0.2.44';
const MODEL = 'openrouter:openai/gpt-oss-20b';
let db: Db;
const cookies: Record<string, string> = {};

const session = async () => (await import('@/lib/server/session')).serverSession();
/** the next action's request: from ADDRESS through `aqven serve`, with `credential` (a session cookie) or none */
const as = (credential: string | null) => {
  req.headers = requestHeaders({ ...LOCAL_HEADERS, ...peerStamp({ address: ADDRESS, forwardedFor: null, proxied: false }) }, credential);
};
const form = (fields: Record<string, string>) => {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  return fd;
};
const signIn = async (name: string, password: string) => {
  as(null);
  return follow(async () => (await import('@/lib/actions/auth')).signInAction({} as SignInState, form({ name, password })));
};
const savePolicy = async (retries: number) => {
  const { saveAgentPolicy } = await import('@/lib/actions/save-agent-policy');
  return saveAgentPolicy({ ok: false }, form({ agent: 'classifier', model: MODEL, retries: String(retries), on_error: 'retry', on_refusal: 'fail', on_truncated: 'fail' }));
};
const clearPause = async (model: string) => (await import('@/lib/actions/clear-rate-limit-pause')).clearRateLimitPause({ status: 'idle' }, form({ model }));
const auditPage = async () => follow(async () => (await import('@/app/audit/page')).default({ searchParams: Promise.resolve({}) }));
/** the trail, oldest first: kind, actor, target, address, detail */
const trail = async () => (await listAudit(db, { limit: 500 })).rows.reverse().map((r: AuditRow) => [r.kind, r.actor, r.target, r.address, r.detail] as const);

beforeAll(async () => {
  process.env.AQVEN_PROJECT = copyShowcase();
  process.env.AQVEN_SIMULATE = '1';
  delete process.env.AQVEN_DATABASE_URL;
  db = (await session()).db;
  const T0 = Date.now();
  for (const [name, role] of [
    ['ana', 'admin'],
    ['ed', 'editor'],
    ['vi', 'viewer'],
  ] as const) {
    await createUser(db, { name, role, password: PASSWORD }, T0);
    cookies[name] = await sessionCookie(db, name, PASSWORD);
  }
}, 90_000);

afterAll(async () => {
  await (await session()).close();
  restoreEnv();
});

describe('the dashboard records who did what, from where', () => {
  it('sign-in: a success names the user, a refusal names a known account only (a typed unknown name is never stored)', async () => {
    expect(await signIn('ana', PASSWORD)).toEqual({ redirect: '/runs' });
    expect(await signIn('ana', 'not the password at all')).toEqual({ error: 'wrong name or password' });
    expect(await signIn('my-secret-passphrase', PASSWORD)).toEqual({ error: 'wrong name or password' });
    expect(await trail()).toEqual([
      ['sign-in.ok', 'ana', 'ana', ADDRESS, null],
      ['sign-in.failed', null, 'ana', ADDRESS, null],
      ['sign-in.failed', null, null, ADDRESS, { account: 'unknown' }],
    ]);
    const stored = JSON.stringify(await db.q.select().from(db.t.auditEvents));
    for (const secret of ['my-secret-passphrase', PASSWORD, 'not the password at all']) expect(stored).not.toContain(secret);
  }, 60_000);

  it('a policy save and a cleared pause name the editor, the agent or model, and what came of it; a viewer forcing them records nothing', async () => {
    await db.q.delete(db.t.auditEvents);
    as(cookies.ed!);
    const saved = await savePolicy(4);
    expect(saved).toMatchObject({ ok: true, revision: expect.any(Number) });
    expect(await clearPause(MODEL)).toMatchObject({ status: 'cleared', model: MODEL, cleared: false });

    as(cookies.vi!);
    expect(await savePolicy(5)).toMatchObject({ ok: false, errors: { form: [{ code: 'E_FORBIDDEN' }] } });
    expect(await clearPause(MODEL)).toMatchObject({ status: 'error', code: 'E_FORBIDDEN' });

    expect(await trail()).toEqual([
      ['policy.saved', 'ed', 'classifier', ADDRESS, { revision: (saved as { revision: number }).revision }],
      ['pause.cleared', 'ed', MODEL, ADDRESS, { hadPause: false }],
    ]);
  }, 60_000);

  it('a password change and a sign-out name the user; the password is nowhere', async () => {
    await db.q.delete(db.t.auditEvents);
    as(cookies.vi!);
    const changed = await follow(async () =>
      (await import('@/lib/actions/auth')).changePasswordAction({} as PasswordState, form({ current: PASSWORD, next: NEW_PASSWORD, repeat: NEW_PASSWORD })),
    );
    expect(changed).toEqual({ redirect: '/account?changed=1' });
    as(cookies.ed!);
    expect(await follow(async () => (await import('@/lib/actions/auth')).signOutAction())).toEqual({ redirect: '/login' });
    expect(await trail()).toEqual([
      ['password.changed', 'vi', 'vi', ADDRESS, { otherSessionsSignedOut: true }],
      ['sign-out', 'ed', 'ed', ADDRESS, null],
    ]);
    expect(JSON.stringify(await db.q.select().from(db.t.auditEvents))).not.toContain(NEW_PASSWORD);
  }, 60_000);

  it('the Audit page lets admins in; an editor or a viewer is sent to the runs, nobody signed in to the login page', async () => {
    as(cookies.ana!);
    const page = await auditPage();
    expect(page).not.toHaveProperty('redirect');
    as(await sessionCookie(db, 'ed', PASSWORD)); // signed out above
    expect(await auditPage()).toEqual({ redirect: '/runs' });
    as(await sessionCookie(db, 'vi', NEW_PASSWORD));
    expect(await auditPage()).toEqual({ redirect: '/runs' });
    as(null);
    expect(await auditPage()).toEqual({ redirect: '/login' });
  }, 60_000);
});
