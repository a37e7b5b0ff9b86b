// `aqven user …` and `aqven token …` as a user runs them (DESIGN: CLI; The dashboard, "Accounts,
// roles and tokens"): the command line over a project's SQLite file (and once over PostgreSQL), exit
// statuses, passwords and tokens printed once and stored only as hashes. The command lines run in
// this process (aqvenHere); those reading a password from a pipe (--password-stdin) run the real bin.
import { join } from 'node:path';
import { verifyPassword } from 'better-auth/crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, hashToken, listTokens, tokenCaller } from '@/db/account-queries';
import { listAudit } from '@/db/audit-queries';
import { addSpend } from '@/db/spend-queries';
import { closeDb, openDatabase } from '@/db/client';
import type { Db } from '@/db/types';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { aqven, aqvenHere, ensureCliBuilt } from './aqven-process';

beforeAll(ensureCliBuilt, 120_000);

/** the environment of a command over the project's SQLite file, whatever the test process has set */
const SQLITE_ENV = { AQVEN_DATABASE_URL: undefined, AQVEN_PUBLIC_URL: undefined, PORT: undefined };
const GENERATED = /^password: ([A-Za-z0-9_-]{24})$/m;

// each test runs the command line a dozen times, and better-auth's scrypt for each password set or checked
describe('aqven user and aqven token over the project database', { timeout: 60_000 }, () => {
  const dir = copyShowcase();
  const file = join(dir, '.aqven', 'aqven.db');
  const cli = (args: string[]) => aqvenHere([...args, '--project', dir], SQLITE_ENV);
  /** the bin in a process, the password piped to its stdin */
  const piped = (args: string[], input: string) => aqven([...args, '--project', dir], SQLITE_ENV, { input });
  // each command closes the project's database when it is done (the handle this process holds with it): opened again for each look
  const db = (): Promise<Db> => openDatabase(file);
  const passwordOf = async (name: string) => {
    const d = await db();
    const [row] = await d.q.select({ hash: d.t.accounts.password }).from(d.t.accounts).innerJoin(d.t.users, eq(d.t.users.id, d.t.accounts.userId)).where(eq(d.t.users.name, name));
    return row?.hash ?? null;
  };
  afterAll(async () => {
    await closeDb(file);
  });

  it('user add prints a generated password once, or takes one line of stdin; user list shows the users', async () => {
    const none = await cli(['user', 'list']);
    expect(none).toMatchObject({ code: 0, err: '' });
    expect(none.out).toBe('no users yet: the dashboard answers on loopback only; add one with `aqven user add NAME --role admin`\n');

    const ana = await cli(['user', 'add', 'Ana', '--role', 'admin']);
    expect(ana.code).toBe(0);
    expect(ana.out).toMatch(/^user ana added \(admin\)\npassword: \S+\nIt is shown only now: hand it to ana, who signs in with the name ana/);
    const generated = GENERATED.exec(ana.out)![1]!;
    expect(await verifyPassword({ hash: (await passwordOf('ana'))!, password: generated })).toBe(true);

    const bob = piped(['user', 'add', 'bob', '--role', 'editor', '--password-stdin'], 'a password from stdin\n');
    expect(bob).toMatchObject({ code: 0, out: 'user bob added (editor)\n', err: '' });
    expect(await verifyPassword({ hash: (await passwordOf('bob'))!, password: 'a password from stdin' })).toBe(true);
    expect((await cli(['user', 'add', 'cy'])).out).toMatch(/^user cy added \(viewer\)\n/); // viewer by default

    const list = await cli(['user', 'list']);
    expect(list.code).toBe(0);
    expect(list.out.split('\n')[0]).toMatch(/^NAME +ROLE +CREATED +LAST SEEN +SPENT TODAY$/);
    expect(
      list.out
        .split('\n')
        .slice(1, 4)
        .map((l) => l.split(/ +/).slice(0, 2)),
    ).toEqual([
      ['ana', 'admin'],
      ['bob', 'editor'],
      ['cy', 'viewer'],
    ]);
    const json = JSON.parse((await cli(['user', 'list', '--json'])).out);
    expect(json).toEqual([
      { name: 'ana', role: 'admin', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), lastSeenAt: null, budgetUsdPerDay: null, spentTodayUsd: 0 },
      { name: 'bob', role: 'editor', createdAt: expect.any(String), lastSeenAt: null, budgetUsdPerDay: null, spentTodayUsd: 0 },
      { name: 'cy', role: 'viewer', createdAt: expect.any(String), lastSeenAt: null, budgetUsdPerDay: null, spentTodayUsd: 0 },
    ]);
    expect(list.out + JSON.stringify(json)).not.toContain(generated);
  });

  it('refuses a bad name, a short password or an unknown role (exit 2) and a taken name (exit 1), storing nothing', async () => {
    const bad = await cli(['user', 'add', 'Bad Name']);
    expect(bad).toMatchObject({ code: 2, out: '' });
    expect(bad.err).toBe(
      'aqven user add: "Bad Name" is not a valid name: use 1 to 64 lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (no ".." and no "." at the end)\n',
    );
    const short = piped(['user', 'add', 'dee', '--password-stdin'], 'too short\n');
    expect(short).toMatchObject({ code: 2, out: '', err: 'aqven user add: the password is too short: at least 12 characters, got 9\n' });
    const empty = piped(['user', 'add', 'dee', '--password-stdin'], '');
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/^aqven user add: --password-stdin read an empty line/);
    expect(await cli(['user', 'add', 'dee', '--role', 'owner'])).toMatchObject({ code: 2, err: 'aqven user add: "owner" is not a role: use viewer, editor, admin\n' });
    expect(await cli(['user', 'add', 'BOB'])).toMatchObject({ code: 1, out: '', err: 'aqven user add: a user named bob already exists\n' });
    expect((await cli(['user', 'list', '--json'])).out).not.toContain('dee');
  });

  it('user passwd sets a new password and says the sessions it signed out', async () => {
    const d = await db();
    const bobId = (await d.q.select({ id: d.t.users.id }).from(d.t.users).where(eq(d.t.users.name, 'bob')))[0]!.id;
    const at = new Date();
    await d.q.insert(d.t.sessions).values({ id: 'bob-browser', token: 'bob-browser', userId: bobId, expiresAt: new Date(at.getTime() + 3_600_000), createdAt: at, updatedAt: at });
    expect(JSON.parse((await cli(['user', 'list', '--json'])).out)[1]).toMatchObject({ name: 'bob', lastSeenAt: at.toISOString() });

    const viaStdin = piped(['user', 'passwd', 'bob', '--password-stdin'], 'another long password\r\n');
    expect(viaStdin).toMatchObject({ code: 0, out: 'password of bob changed; 1 session signed out everywhere\n', err: '' });
    expect(await verifyPassword({ hash: (await passwordOf('bob'))!, password: 'another long password' })).toBe(true);
    const after = await db();
    expect(await after.q.select().from(after.t.sessions).where(eq(after.t.sessions.userId, bobId))).toEqual([]);

    const generated = await cli(['user', 'passwd', 'bob']);
    expect(generated.code).toBe(0);
    expect(generated.out).toMatch(/^password of bob changed; 0 sessions signed out everywhere\npassword: /);
    expect(await verifyPassword({ hash: (await passwordOf('bob'))!, password: GENERATED.exec(generated.out)![1]! })).toBe(true);
    expect(await cli(['user', 'passwd', 'nobody'])).toMatchObject({ code: 1, err: 'aqven user passwd: no user named nobody\n' });
  });

  it('user remove: never the last admin while others remain, never the only user (exit 1); an unknown user exits 1', async () => {
    expect(await cli(['user', 'remove', 'ana'])).toMatchObject({
      code: 1,
      out: '',
      err: 'aqven user remove: ana is the last admin and 2 other users remain: add another admin first\n',
    });
    expect(await cli(['user', 'remove', 'bob'])).toMatchObject({ code: 0, out: 'user bob removed (0 sessions signed out)\n' });
    expect(await cli(['user', 'remove', 'bob'])).toMatchObject({ code: 1, err: 'aqven user remove: no user named bob\n' });
    expect((await cli(['user', 'remove', 'no way'])).code).toBe(2);
    expect((await cli(['user', 'remove', 'cy'])).code).toBe(0);
    // never the only user: the dashboard would open again to whatever reaches it from this machine
    expect(await cli(['user', 'remove', 'ana'])).toMatchObject({
      code: 1,
      err: 'aqven user remove: ana is the only user: without one the dashboard opens to this machine without sign-in; add another admin first\n',
    });
    expect(JSON.parse((await cli(['user', 'list', '--json'])).out).map((u: { name: string }) => u.name)).toEqual(['ana']);
  });

  it('token create prints the token once; list never shows it or its hash; a revoked token names no caller', async () => {
    expect((await cli(['token', 'list'])).out).toBe('no tokens yet: make one with `aqven token create NAME`\n');
    const made = await cli(['token', 'create', 'CI']);
    expect(made.code).toBe(0);
    const token = /^aqven_[A-Za-z0-9_-]{43}$/m.exec(made.out)![0];
    expect(made.out.split(token)).toHaveLength(2); // printed once
    expect(made.out).toContain('token ci created (editor):\n');
    expect(made.out).toContain('It will not be shown again');
    expect(made.out).toContain('`Authorization: Bearer <token>`');
    expect(made.out).toContain('POST /api/runs');
    expect(made.out).toContain('curl -X POST http://127.0.0.1:3000/api/runs ');
    expect(await tokenCaller(await db(), token, Date.now())).toMatchObject({ name: 'ci', role: 'editor' });

    expect((await cli(['token', 'create', 'reader', '--role', 'viewer'])).out).toContain('token reader created (viewer):\n');
    expect(await cli(['token', 'create', 'ci'])).toMatchObject({ code: 1, err: 'aqven token create: a token named ci already exists: choose another name\n' });
    expect((await cli(['token', 'create', 'c i'])).code).toBe(2);
    expect((await cli(['token', 'create', 'x', '--role', 'root'])).code).toBe(2);

    const list = await cli(['token', 'list']);
    const json = await cli(['token', 'list', '--json']);
    for (const shown of [list.out, json.out]) {
      expect(shown).not.toContain(token);
      expect(shown).not.toContain(token.slice(6, 20));
      expect(shown).not.toContain(hashToken(token));
    }
    expect(list.out.split('\n')[0]).toMatch(/^NAME +ROLE +CREATED BY +CREATED +LAST USED +EXPIRES +REVOKED +SPENT TODAY$/);
    expect(list.out.split('\n')[1]).toMatch(/^ci +editor +cli:\S+ +\S+Z +\S+Z +\S+Z +- +\$0\.00$/); // used once above; expires in 90 days
    expect(JSON.parse(json.out).map((t: { name: string; role: string }) => [t.name, t.role])).toEqual([
      ['ci', 'editor'],
      ['reader', 'viewer'],
    ]);
    expect(Object.keys(JSON.parse(json.out)[0]).sort()).toEqual([
      'budgetUsdPerDay',
      'createdAt',
      'createdBy',
      'expiresAt',
      'lastUsedAt',
      'name',
      'revokedAt',
      'role',
      'scope',
      'spentTodayUsd',
    ]);
    // 90 days by default
    const expiresAt = Date.parse(JSON.parse(json.out)[0].expiresAt);
    expect(expiresAt - Date.parse(JSON.parse(json.out)[0].createdAt)).toBe(90 * 86_400_000);

    expect(await cli(['token', 'revoke', 'ci'])).toMatchObject({ code: 0, out: 'token ci revoked\n' });
    expect(await tokenCaller(await db(), token, Date.now())).toBeNull();
    expect((await cli(['token', 'revoke', 'ci'])).out).toMatch(/^token ci was already revoked \(\S+Z\)\n$/);
    expect(await cli(['token', 'revoke', 'nope'])).toMatchObject({ code: 1, err: 'aqven token revoke: no token named nope\n' });
    expect((await listTokens(await db())).find((t) => t.name === 'ci')!.revokedAt).toEqual(expect.any(Number));

    // the example goes where the dashboard is: its public URL when one is set
    const elsewhere = await aqvenHere(['token', 'create', 'ci-public', '--project', dir], { ...SQLITE_ENV, AQVEN_PUBLIC_URL: 'https://aqven.example.com/' });
    expect(elsewhere.out).toContain('curl -X POST https://aqven.example.com/api/runs ');
  });

  it('token create --scope metrics: a token that reads GET /metrics and nothing else, with no role or budget; listed as such', async () => {
    const made = await cli(['token', 'create', 'prometheus', '--scope', 'metrics', '--expires', 'never']);
    expect(made.code).toBe(0);
    const token = /^aqven_[A-Za-z0-9_-]{43}$/m.exec(made.out)![0];
    expect(made.out).toContain('token prometheus created (metrics only):\n');
    expect(made.out).toContain("Give it to Prometheus as the scrape job's bearer token");
    expect(made.out).toContain('curl http://127.0.0.1:3000/metrics -H "Authorization: Bearer $AQVEN_TOKEN"\n');
    expect(made.out).not.toContain('/api/runs');
    expect(await tokenCaller(await db(), token, Date.now())).toMatchObject({ name: 'prometheus', scope: 'metrics' });
    expect((await cli(['token', 'list'])).out.split('\n').find((l) => l.startsWith('prometheus '))).toMatch(/^prometheus +metrics only +cli:/);
    expect(JSON.parse((await cli(['token', 'list', '--json'])).out).find((t: { name: string }) => t.name === 'prometheus')).toMatchObject({ scope: 'metrics' });
    const audited = await listAudit(await db(), { kind: 'token.created', limit: 10 });
    expect(audited.rows.find((r) => r.target === 'token:prometheus')?.detail).toEqual({ scope: 'metrics', expiresAt: null });
    // refused before the database is opened: exit 2, nothing stored
    expect(await cli(['token', 'create', 'p2', '--scope', 'admin'])).toMatchObject({
      code: 2,
      err: 'aqven token create: --scope "admin" is not a scope: use metrics (a token that reads GET /metrics and nothing else)\n',
    });
    expect(await cli(['token', 'create', 'p2', '--scope', 'metrics', '--role', 'admin'])).toMatchObject({
      code: 2,
      err: 'aqven token create: --role and --scope metrics do not go together: a metrics token calls no /api route, so it has no role\n',
    });
    expect((await cli(['token', 'create', 'p2', '--scope', 'metrics', '--budget', '5/day'])).code).toBe(2);
    expect((await listTokens(await db())).map((t) => t.name)).not.toContain('p2');
    // a token made without --scope reads the API as before, and no metrics scope
    const svc = /^aqven_\S+$/m.exec((await cli(['token', 'create', 'svc'])).out)![0];
    expect((await tokenCaller(await db(), svc, Date.now()))?.scope).toBeNull();
  });

  it('token create --expires and --budget; token budget and user budget; the lists show spend today against the budget', async () => {
    const made = await cli(['token', 'create', 'nightly', '--expires', '12h', '--budget', '5/day']);
    expect(made.code).toBe(0);
    const token = /^aqven_[A-Za-z0-9_-]{43}$/m.exec(made.out)![0];
    expect(made.out).toMatch(/^It expires at \S+Z \(in (11 h 59 min|12 h)\); make a new one before then\.$/m);
    expect(made.out).toContain('The runs it starts may spend $5.00/day (UTC days); past that they stop with E_BUDGET until 00:00 UTC.\n');
    expect(await tokenCaller(await db(), token, Date.now())).toMatchObject({ name: 'nightly' });
    expect(await tokenCaller(await db(), token, Date.now() + 13 * 3_600_000)).toBeNull(); // past its expiry
    expect((await cli(['token', 'create', 'forever', '--expires', 'never'])).out).toContain('It never expires (--expires never): revoke it once it is no longer needed.\n');
    const dated = await cli(['token', 'create', 'dated', '--expires', '2099-12-31']);
    expect(dated.out).toContain('It expires at 2099-12-31T00:00:00.000Z (in ');
    // refused before the database is opened: exit 2, nothing stored
    expect(await cli(['token', 'create', 'old', '--expires', '2020-01-01'])).toMatchObject({
      code: 2,
      err: 'aqven token create: --expires "2020-01-01" is not in the future: write how long it lasts ("90d", "30d", "12h"), a date or time ("2026-12-31", "2026-12-31T18:00:00Z"), or "never"\n',
    });
    expect((await cli(['token', 'create', 'old', '--expires', 'soon'])).code).toBe(2);
    expect(await cli(['token', 'create', 'old', '--budget', '5'])).toMatchObject({
      code: 2,
      err: 'aqven token create: --budget "5" is not a daily budget: write a daily budget in USD as "5/day" (or "0.50/day"), or "none" for no budget\n',
    });
    expect((await listTokens(await db())).map((t) => t.name)).not.toContain('old');

    // what the runs it started spent today shows against its budget
    const d = await db();
    await addSpend(d, d.q, 'token:nightly', 1.2, Date.now());
    const row = (await cli(['token', 'list'])).out.split('\n').find((l) => l.startsWith('nightly '));
    expect(row).toMatch(/ \$1\.20 of \$5\.00\/day$/);
    expect((await cli(['token', 'list'])).out.split('\n').find((l) => l.startsWith('forever '))).toMatch(/ never +- +\$0\.00$/);
    expect(JSON.parse((await cli(['token', 'list', '--json'])).out).find((t: { name: string }) => t.name === 'nightly')).toMatchObject({
      budgetUsdPerDay: 5,
      spentTodayUsd: 1.2,
      expiresAt: expect.stringMatching(/Z$/),
    });
    expect(await cli(['token', 'budget', 'nightly', '$2.50/day'])).toMatchObject({ code: 0, out: 'token nightly: budget $2.50/day (spent today: $1.20 of $2.50/day)\n' });
    expect(await cli(['token', 'budget', 'nightly', 'none'])).toMatchObject({ code: 0, out: 'token nightly: budget none (spent today: $1.20)\n' });
    expect(await cli(['token', 'budget', 'nope', '1/day'])).toMatchObject({ code: 1, err: 'aqven token budget: no token named nope\n' });
    expect((await cli(['token', 'budget', 'nightly', 'lots'])).code).toBe(2);

    await createUser(await db(), { name: 'fin', role: 'editor', password: 'a long enough password' }, Date.now());
    expect(await cli(['user', 'budget', 'fin', '3/day'])).toMatchObject({ code: 0, out: 'user fin: budget $3.00/day (spent today: $0.00 of $3.00/day)\n' });
    expect((await cli(['user', 'list'])).out.split('\n').find((l) => l.startsWith('fin '))).toMatch(/ \$0\.00 of \$3\.00\/day$/);
    expect(JSON.parse((await cli(['user', 'list', '--json'])).out).find((u: { name: string }) => u.name === 'fin')).toMatchObject({ budgetUsdPerDay: 3, spentTodayUsd: 0 });
    expect(await cli(['user', 'budget', 'nobody', '3/day'])).toMatchObject({ code: 1, err: 'aqven user budget: no user named nobody\n' });

    // every change is in the audit trail, by whoever ran the command
    const kinds = (await listAudit(await db(), { limit: 500 })).rows.map((r) => [r.kind, r.target]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        ['token.created', 'token:nightly'],
        ['token.revoked', 'token:ci'],
        ['user.budget-set', 'token:nightly'],
        ['user.budget-set', 'fin'],
      ]),
    );
  }, 120_000);

  it('a project failing check is bad usage (exit 2): it names the database', async () => {
    const res = await aqvenHere(['user', 'list', '--project', join(dir, 'missing')], SQLITE_ENV);
    expect(res.code).toBe(2);
    expect(res.err).toContain(`aqven user list: the project ${join(dir, 'missing')} fails aqven check (its aqven.yaml names the database); fix it, or set AQVEN_DATABASE_URL`);
  });
});

describe('aqven user over AQVEN_DATABASE_URL', { timeout: 60_000 }, () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb('pg');
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('stores the users in PostgreSQL, no project needed; an unreachable database exits 3 without its password', async () => {
    const env = { AQVEN_DATABASE_URL: t.target };
    expect(aqven(['user', 'add', 'ana', '--role', 'admin', '--password-stdin'], env, { input: 'a password for pg\n' })).toMatchObject({ code: 0, out: 'user ana added (admin)\n' });
    expect(JSON.parse((await aqvenHere(['user', 'list', '--json'], env)).out)).toEqual([
      { name: 'ana', role: 'admin', createdAt: expect.any(String), lastSeenAt: null, budgetUsdPerDay: null, spentTodayUsd: 0 },
    ]);
    const down = await aqvenHere(['token', 'list'], { AQVEN_DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' });
    expect(down.code).toBe(3);
    expect(down.err).toMatch(/^aqven token list: cannot connect to the PostgreSQL database postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none: .*\n$/);
    expect(down.err).not.toContain('secret');
  });
});
