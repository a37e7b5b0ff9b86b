// `aqven user add NAME [--role R] [--password-stdin]`, `aqven user list [--json]`, `aqven user remove
// NAME`, `aqven user passwd NAME [--password-stdin]`, `aqven user budget NAME USD/day|none` (DESIGN:
// CLI; The dashboard, "Accounts, roles and tokens", "Spend budgets"): the people who sign in to the
// dashboard, in the run database — AQVEN_DATABASE_URL when
// set, else the SQLite file the project names. Exit statuses: 0 done; 1 refused (the name is taken,
// no such user, the last admin); 2 bad usage (a bad name, role or password, a project failing
// check); 3 the database cannot be opened or reached.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Command } from 'commander';
import {
  AccountError,
  checkPassword,
  checkRole,
  createUser,
  listUsers,
  normalizeName,
  removeUser,
  ROLES,
  setPassword,
  setUserBudget,
  type AccountErrorCode,
  type UserListed,
} from '@/db/account-queries';
import { openForCommand, type CommandDatabase } from '@/db/command-database';
import { spentToday } from '@/db/spend-queries';
import type { Db } from '@/db/types';
import { BUDGET_HINT, fmtBudget, fmtSpend, parseDailyBudget } from '@/lib/shared/spend-budget';
import { auditCli } from './audit-record';
import { type CliIo, processIo } from './io';
import { commandDatabaseTarget, PROJECT_OPTION } from './project-dir';
import { EXIT_CANNOT_OPEN, EXIT_USAGE, UsageError, exitFor } from './exit';

type Env = Record<string, string | undefined>;

/** exit 1: the stored accounts say no (a taken name, no such user or token, the last admin) */
export const EXIT_REFUSED = 1;

export { EXIT_CANNOT_OPEN, EXIT_USAGE };

export { UsageError };

/** What the account commands share: the project (its SQLite file) or AQVEN_DATABASE_URL, and the clock. */
export interface AccountCommandOptions {
  project?: string;
  env?: Env;
  now?: () => number;
}

const ACCOUNT_EXIT: Record<AccountErrorCode, number> = {
  E_NAME: EXIT_USAGE,
  E_ROLE: EXIT_USAGE,
  E_PASSWORD: EXIT_USAGE,
  E_EXISTS: EXIT_REFUSED,
  E_NOT_FOUND: EXIT_REFUSED,
  E_LAST_ADMIN: EXIT_REFUSED,
  E_LAST_USER: EXIT_REFUSED,
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const iso = (at: Date | number | null) => (at === null ? null : new Date(at).toISOString());

/** The exit status of a failed account command, its message said as one line; an unknown error is rethrown (exit 70). */
export function accountFailure(command: string, err: unknown, io: CliIo): number {
  const say = (text: string) => io.err(`aqven ${command}: ${text}\n`);
  if (err instanceof AccountError) {
    say(err.message);
    return ACCOUNT_EXIT[err.code];
  }
  return exitFor(err, say, [[[UsageError], EXIT_USAGE]]);
}

/**
 * Opens the accounts' database (migrated), runs `f`, closes it; what fails becomes one line and an
 * exit status (`aqven COMMAND: …`). The user and token commands and `aqven serve` share it.
 */
export async function withAccountsDb(command: string, opts: AccountCommandOptions, io: CliIo, f: (db: Db) => Promise<number>): Promise<number> {
  let opened: CommandDatabase | undefined;
  try {
    opened = await openForCommand(await commandDatabaseTarget(opts, io));
    return await f(opened.db);
  } catch (err) {
    return accountFailure(command, err, io);
  } finally {
    await opened?.close();
  }
}

/** A generated password: 18 random bytes, 24 characters of base64url. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/** The first line of `input` (without its line end), for `--password-stdin`; the stream is released after it. */
export function readLine(input: Readable = process.stdin): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (line: string) => {
      input.off('data', onData).off('end', onEnd).off('error', onError);
      input.pause();
      if (input === process.stdin) input.destroy(); // an open pipe must not keep the command alive
      resolve(line.endsWith('\r') ? line.slice(0, -1) : line);
    };
    const onData = (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) finish(text.slice(0, end));
    };
    const onEnd = () => finish(text);
    const onError = (err: Error) => reject(err);
    input.setEncoding('utf8');
    input.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** The password the command sets: one line of stdin with `--password-stdin`, else a generated one (printed once). */
async function passwordFor(opts: { passwordStdin?: boolean; stdin?: () => Promise<string> }): Promise<{ password: string; generated: boolean }> {
  if (!opts.passwordStdin) return { password: generatePassword(), generated: true };
  const password = await (opts.stdin ?? readLine)();
  if (password === '') throw new UsageError('--password-stdin read an empty line: pipe the password in, e.g. `printf %s "$PASSWORD" | aqven user add …`');
  checkPassword(password);
  return { password, generated: false };
}

function generatedLines(name: string, password: string): string {
  return `password: ${password}\nIt is shown only now: hand it to ${name}, who signs in with the name ${name} (change it with \`aqven user passwd ${name}\`).\n`;
}

// ---- the commands ---------------------------------------------------------------------------

export interface PasswordOptions extends AccountCommandOptions {
  passwordStdin?: boolean;
  /** reads the line of `--password-stdin` (tests pass their own) */
  stdin?: () => Promise<string>;
}

/** `aqven user add NAME [--role R] [--password-stdin]`. */
export async function runUserAdd(name: string, opts: PasswordOptions & { role?: string }, io: CliIo = processIo): Promise<number> {
  let pw: { password: string; generated: boolean };
  let login: string;
  try {
    // bad input is said before the database is opened
    login = normalizeName(name);
    checkRole(opts.role ?? 'viewer');
    pw = await passwordFor(opts);
  } catch (err) {
    return accountFailure('user add', err, io);
  }
  return withAccountsDb('user add', opts, io, async (db) => {
    const user = await createUser(db, { name: login, role: opts.role ?? 'viewer', password: pw.password }, (opts.now ?? Date.now)());
    await auditCli('user add', db, io, { kind: 'user.added', target: user.name, detail: { role: user.role } }, (opts.now ?? Date.now)());
    io.out(`user ${user.name} added (${user.role})\n${pw.generated ? generatedLines(user.name, pw.password) : ''}`);
    return 0;
  });
}

/** A user as listed: with what the runs they started spent today (UTC), against their budget. */
export type UserWithSpend = UserListed & { spentTodayUsd: number };

export function formatUsers(users: UserWithSpend[]): string {
  if (users.length === 0) return 'no users yet: the dashboard answers on loopback only; add one with `aqven user add NAME --role admin`';
  const rows = [
    ['NAME', 'ROLE', 'CREATED', 'LAST SEEN', 'SPENT TODAY'],
    ...users.map((u) => [u.name, u.role, iso(u.createdAt)!, iso(u.lastSeenAt) ?? 'never', fmtSpend(u.spentTodayUsd, u.budgetUsdPerDay)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** `aqven user list [--json]`: with each user's spend today (UTC) against their daily budget. */
export async function runUserList(opts: AccountCommandOptions & { json?: boolean }, io: CliIo = processIo): Promise<number> {
  return withAccountsDb('user list', opts, io, async (db) => {
    const listed = await listUsers(db);
    const spent = await spentToday(
      db,
      listed.map((u) => u.name),
      (opts.now ?? Date.now)(),
    );
    const users = listed.map((u) => ({ ...u, spentTodayUsd: spent.get(u.name) ?? 0 }));
    if (opts.json) {
      const shown = users.map((u) => ({
        name: u.name,
        role: u.role,
        createdAt: iso(u.createdAt),
        lastSeenAt: iso(u.lastSeenAt),
        budgetUsdPerDay: u.budgetUsdPerDay,
        spentTodayUsd: u.spentTodayUsd,
      }));
      io.out(`${JSON.stringify(shown, null, 2)}\n`);
    } else io.out(`${formatUsers(users)}\n`);
    return 0;
  });
}

/** `aqven user remove NAME`. */
export async function runUserRemove(name: string, opts: AccountCommandOptions, io: CliIo = processIo): Promise<number> {
  try {
    normalizeName(name);
  } catch (err) {
    return accountFailure('user remove', err, io);
  }
  return withAccountsDb('user remove', opts, io, async (db) => {
    const removed = await removeUser(db, name);
    await auditCli('user remove', db, io, { kind: 'user.removed', target: removed.name, detail: { sessionsSignedOut: removed.signedOut } }, (opts.now ?? Date.now)());
    io.out(`user ${removed.name} removed (${plural(removed.signedOut, 'session')} signed out)\n`);
    return 0;
  });
}

/** `aqven user passwd NAME [--password-stdin]`. */
export async function runUserPasswd(name: string, opts: PasswordOptions, io: CliIo = processIo): Promise<number> {
  let pw: { password: string; generated: boolean };
  try {
    normalizeName(name);
    pw = await passwordFor(opts);
  } catch (err) {
    return accountFailure('user passwd', err, io);
  }
  return withAccountsDb('user passwd', opts, io, async (db) => {
    const changed = await setPassword(db, name, pw.password, (opts.now ?? Date.now)());
    await auditCli(
      'user passwd',
      db,
      io,
      { kind: 'password.reset', target: changed.name, detail: { sessionsSignedOut: changed.signedOut, generated: pw.generated } },
      (opts.now ?? Date.now)(),
    );
    io.out(`password of ${changed.name} changed; ${plural(changed.signedOut, 'session')} signed out everywhere\n${pw.generated ? generatedLines(changed.name, pw.password) : ''}`);
    return 0;
  });
}

/** `aqven user budget NAME USD/day|none`: what the runs, replays and probes the user starts may spend per UTC day. */
export async function runUserBudget(name: string, budget: string, opts: AccountCommandOptions, io: CliIo = processIo): Promise<number> {
  let usd: number | null | undefined;
  try {
    normalizeName(name);
    usd = parseDailyBudget(budget);
    if (usd === undefined) throw new UsageError(`the budget ${JSON.stringify(budget)} is not a daily budget: ${BUDGET_HINT}`);
  } catch (err) {
    return accountFailure('user budget', err, io);
  }
  const budgetUsd = usd;
  return withAccountsDb('user budget', opts, io, async (db) => {
    const now = (opts.now ?? Date.now)();
    const set = await setUserBudget(db, name, budgetUsd);
    await auditCli('user budget', db, io, { kind: 'user.budget-set', target: set.name, detail: { budgetUsdPerDay: set.budgetUsdPerDay } }, now);
    const today = (await spentToday(db, [set.name], now)).get(set.name) ?? 0;
    io.out(`user ${set.name}: budget ${fmtBudget(set.budgetUsdPerDay)} (spent today: ${fmtSpend(today, set.budgetUsdPerDay)})\n`);
    return 0;
  });
}

// ---- registration ---------------------------------------------------------------------------

export function registerUsers(program: Command, io: CliIo = processIo): Command {
  const user = program.command('user').description('the people who sign in to the dashboard: add, list, remove, change a password, set a daily budget');

  user
    .command('add')
    .description('add a user; prints a generated password once (or reads one line of stdin with --password-stdin)')
    .argument('<name>', 'login: lowercase letters, digits, ".", "_", "-"')
    .option('--role <role>', `${ROLES.join(' | ')}`, 'viewer')
    .option('--password-stdin', 'read the password from the first line of stdin instead of generating one')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { role: string; passwordStdin?: boolean; project?: string }) => io.exit(await runUserAdd(name, opts, io)));

  user
    .command('list')
    .description('the users: name, role, when created, when last seen, spent today against their budget')
    .option('--json', 'print JSON')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (opts: { json?: boolean; project?: string }) => io.exit(await runUserList(opts, io)));

  user
    .command('remove')
    .description('remove a user and sign them out (never the only user, nor the last admin while other users remain)')
    .argument('<name>', 'login')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { project?: string }) => io.exit(await runUserRemove(name, opts, io)));

  user
    .command('passwd')
    .description("set a user's password (generated and printed once, or one line of stdin) and sign them out everywhere")
    .argument('<name>', 'login')
    .option('--password-stdin', 'read the password from the first line of stdin instead of generating one')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { passwordStdin?: boolean; project?: string }) => io.exit(await runUserPasswd(name, opts, io)));

  user
    .command('budget')
    .description('set what the runs a user starts may spend per UTC day ("5/day"), or "none"')
    .argument('<name>', 'login')
    .argument('<budget>', 'USD per UTC day, e.g. "5/day", or "none"')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, budget: string, opts: { project?: string }) => io.exit(await runUserBudget(name, budget, opts, io)));
  return user;
}
