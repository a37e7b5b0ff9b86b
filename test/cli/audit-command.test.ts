// `aqven audit` and the CLI's doors to the audit trail (DESIGN: CLI; The dashboard, "Audit trail"):
// user add / passwd / remove and project push each leave one event by `cli:<login>` — never the
// password —; `aqven audit` lists them newest first with its filters, refuses bad options before
// opening anything, and a row that cannot be written is a warning, not a failed command. In process
// (captureIo) over a project's SQLite file and PostgreSQL; the command line once, for its registration.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '@/db/audit-queries';
import { closeDb, openDatabase } from '@/db/client';
import * as schema from '@/db/schema';
import { cliAuthor } from '@/db/snapshot-queries';
import type { Db } from '@/db/types';
import { runAudit } from '@/lib/cli/audit';
import { auditCli } from '@/lib/cli/audit-record';
import { captureIo } from '@/lib/cli/io';
import { runProjectPush } from '@/lib/cli/project';
import { runUserAdd, runUserPasswd, runUserRemove } from '@/lib/cli/users';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { aqvenHere } from './aqven-process';

const T0 = Date.UTC(2026, 11, 1, 9);
const MINUTE = 60_000;
const PASSWORD = 'a password nobody may read';
const NEW_PASSWORD = 'another password nobody reads';

describe('the CLI records what it changes, and aqven audit lists it (SQLite)', () => {
  const dir = copyShowcase();
  const file = join(dir, '.aqven', 'aqven.db');
  const base = { project: dir, env: {} as Record<string, string | undefined> };
  const me = cliAuthor();
  const trail = async () => (await listAudit(await openDatabase(file), { limit: 500 })).rows;
  afterAll(async () => {
    await closeDb(file);
  });

  it('user add, passwd and remove each record one event by cli:<login>, with no password anywhere', async () => {
    const run = async (f: (io: ReturnType<typeof captureIo>) => Promise<number>) => {
      const io = captureIo();
      expect(await f(io), io.stderr).toBe(0);
      return io;
    };
    await run((io) => runUserAdd('ana', { ...base, role: 'admin', passwordStdin: true, stdin: async () => PASSWORD, now: () => T0 }, io));
    const bob = await run((io) => runUserAdd('bob', { ...base, role: 'editor', now: () => T0 + MINUTE }, io)); // a generated password
    const generated = /^password: (\S+)$/m.exec(bob.stdout)![1]!;
    await run((io) => runUserPasswd('bob', { ...base, passwordStdin: true, stdin: async () => NEW_PASSWORD, now: () => T0 + 2 * MINUTE }, io));
    await run((io) => runUserRemove('bob', { ...base, now: () => T0 + 3 * MINUTE }, io));

    const rows = await trail();
    expect(rows.map((r) => [r.kind, r.actor, r.target, r.address, r.detail])).toEqual([
      ['user.removed', me, 'bob', null, { sessionsSignedOut: 0 }],
      ['password.reset', me, 'bob', null, { sessionsSignedOut: 0, generated: false }],
      ['user.added', me, 'bob', null, { role: 'editor' }],
      ['user.added', me, 'ana', null, { role: 'admin' }],
    ]);
    expect(rows.map((r) => r.at)).toEqual([T0 + 3 * MINUTE, T0 + 2 * MINUTE, T0 + MINUTE, T0]);
    const stored = JSON.stringify(await (await openDatabase(file)).q.select().from((await openDatabase(file)).t.auditEvents));
    for (const secret of [PASSWORD, NEW_PASSWORD, generated]) expect(stored).not.toContain(secret);
  });

  it('a refused command records nothing (a taken name, no such user)', async () => {
    const before = (await trail()).length;
    expect(await runUserAdd('ana', { ...base, passwordStdin: true, stdin: async () => PASSWORD }, captureIo())).toBe(1);
    expect(await runUserRemove('nobody', base, captureIo())).toBe(1);
    expect(await trail()).toHaveLength(before);
  });

  it('aqven audit prints the events newest first, one line each; filters by kind, actor and --since; says when older ones match', async () => {
    const io = captureIo();
    expect(await runAudit({ ...base, now: () => T0 + 10 * MINUTE }, io)).toBe(0);
    const lines = io.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT +KIND +ACTOR +ADDRESS +TARGET +DETAIL$/);
    expect(lines.slice(1).map((l) => l.split(/ {2,}/).slice(0, 5))).toEqual([
      ['2026-12-01T09:03:00.000Z', 'user.removed', me, '-', 'bob'],
      ['2026-12-01T09:02:00.000Z', 'password.reset', me, '-', 'bob'],
      ['2026-12-01T09:01:00.000Z', 'user.added', me, '-', 'bob'],
      ['2026-12-01T09:00:00.000Z', 'user.added', me, '-', 'ana'],
    ]);
    expect(lines[2]).toMatch(/ sessionsSignedOut=0 generated=false$/);

    const kind = captureIo();
    expect(await runAudit({ ...base, kind: 'user.added', json: true }, kind)).toBe(0);
    const json = JSON.parse(kind.stdout) as { events: { at: string; kind: string; target: string }[]; more: boolean };
    expect(json).toEqual({
      events: [
        { at: '2026-12-01T09:01:00.000Z', kind: 'user.added', actor: me, address: null, target: 'bob', detail: { role: 'editor' } },
        { at: '2026-12-01T09:00:00.000Z', kind: 'user.added', actor: me, address: null, target: 'ana', detail: { role: 'admin' } },
      ],
      more: false,
    });

    const recent = captureIo();
    expect(await runAudit({ ...base, since: '90s', now: () => T0 + 3 * MINUTE, json: true }, recent)).toBe(0);
    expect((JSON.parse(recent.stdout) as { events: { kind: string }[] }).events.map((e) => e.kind)).toEqual(['user.removed', 'password.reset']);
    const sinceIso = captureIo();
    expect(await runAudit({ ...base, since: '2026-12-01T09:02:00Z', json: true }, sinceIso)).toBe(0);
    expect((JSON.parse(sinceIso.stdout) as { events: unknown[] }).events).toHaveLength(2);

    const limited = captureIo();
    expect(await runAudit({ ...base, limit: '1' }, limited)).toBe(0);
    expect(limited.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(limited.stdout).toContain('(the newest 1; older events match too: narrow --since, --kind or --actor, or raise --limit up to 500)');

    const none = captureIo();
    expect(await runAudit({ ...base, actor: 'token:ci' }, none)).toBe(0);
    expect(none.stdout).toBe('no events match\n');
  });

  it('refuses a bad --since, --kind or --limit (exit 2) before opening the database', async () => {
    for (const [opts, said] of [
      [{ since: 'yesterday' }, 'aqven audit: --since "yesterday" is neither a period (24h, 7d, 30m: units d, h, m minutes, s, ms) nor an ISO 8601 time (2026-12-01T09:00:00Z)\n'],
      [{ kind: 'sign-in' }, /^aqven audit: --kind must be one of sign-in\.ok, sign-in\.failed, .*; got "sign-in"\n$/],
      [{ limit: '0' }, 'aqven audit: --limit must be a whole number from 1 to 500, got "0"\n'],
      [{ limit: '2.5' }, 'aqven audit: --limit must be a whole number from 1 to 500, got "2.5"\n'],
    ] as const) {
      const io = captureIo();
      // a project that does not exist: had the database been opened, the message would say so
      expect(await runAudit({ project: join(dir, 'missing'), env: {}, ...opts }, io)).toBe(2);
      if (typeof said === 'string') expect(io.stderr).toBe(said);
      else expect(io.stderr).toMatch(said);
      expect(io.stdout).toBe('');
    }
  });

  it('a row that cannot be written is a warning on stderr: the command keeps its status', async () => {
    // the project's database opened read-only: every write is refused
    await openDatabase(file); // made and migrated, if this test runs alone
    const conn = new Database(file, { readonly: true });
    const readOnly = { dialect: 'sqlite', name: file, q: drizzle(conn, { schema }), t: schema, $client: conn } as unknown as Db;
    const io = captureIo();
    try {
      expect(await auditCli('user add', readOnly, io, { kind: 'user.added', target: 'cy', detail: { role: 'viewer' } })).toBe(false);
    } finally {
      conn.close();
    }
    expect(io.stderr).toBe(`aqven user add: warning: the audit trail could not record user.added of cy by ${me}: attempt to write a readonly database\n`);
  });

  it('is a command of the command line (--json over the project)', async () => {
    const res = await aqvenHere(['audit', '--kind', 'user.removed', '--json', '--project', dir], { AQVEN_DATABASE_URL: undefined });
    expect(res.code, res.err).toBe(0);
    expect((JSON.parse(res.out) as { events: { target: string }[] }).events.map((e) => e.target)).toEqual(['bob']);
  });
});

describe('aqven project push records project.pushed (PostgreSQL)', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb('pg');
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('one event per push, by the author, naming the snapshot and whether it was new', async () => {
    const env = { AQVEN_DATABASE_URL: t.target, OPENROUTER_API_KEY: 'sk-test' };
    const dir = copyShowcase();
    expect(await runProjectPush(dir, { env }, captureIo())).toBe(0);
    expect(await runProjectPush(dir, { env, author: 'cli:release-bot' }, captureIo())).toBe(0);
    const rows = (await listAudit(t.db, { kind: 'project.pushed' })).rows;
    expect(rows.map((r) => [r.actor, r.target, r.detail?.created])).toEqual([
      ['cli:release-bot', 'snapshot 1', false],
      [cliAuthor(), 'snapshot 1', true],
    ]);
    expect(rows[1]!.detail).toEqual({ created: true, files: expect.any(Number) });
  }, 60_000);
});
