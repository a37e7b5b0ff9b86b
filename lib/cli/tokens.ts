// `aqven token create NAME [--role R | --scope metrics] [--expires WHEN] [--budget USD/day]`, `aqven
// token list [--json]`, `aqven token revoke NAME`, `aqven token budget NAME USD/day|none` (DESIGN:
// CLI; The dashboard, "Accounts, roles and tokens", "Spend budgets"): the keys services present as
// `Authorization: Bearer …` on POST /api/runs, and a Prometheus scrape job on GET /metrics (`--scope
// metrics`: that and nothing else). A token is printed once, when it is made; only its
// sha256 is stored, and neither is ever listed. It expires (90 days unless `--expires` says
// otherwise; `never` only when asked for), and may carry a daily spend budget. Exit statuses as for
// `aqven user`: 0 done, 1 refused (the name is taken, no such token), 2 bad usage, 3 the database
// cannot be opened or reached.
import type { Command } from 'commander';
import { checkRole, createToken, listTokens, normalizeName, revokeToken, ROLES, setTokenBudget, TOKEN_SCOPES, type TokenInfo, type TokenScope } from '@/db/account-queries';
import { cliAuthor } from '@/db/snapshot-queries';
import { spentToday } from '@/db/spend-queries';
import { parseDuration } from '@/lib/project/duration';
import { BUDGET_HINT, fmtBudget, fmtSpend, fmtWait, parseDailyBudget } from '@/lib/shared/spend-budget';
import { auditCli } from './audit-record';
import { type CliIo, processIo } from './io';
import { accountFailure, UsageError, withAccountsDb, type AccountCommandOptions } from './users';
import { PROJECT_OPTION } from './project-dir';

export const DEFAULT_TOKEN_ROLE = 'editor';
/** the role stored with a `--scope metrics` token: never consulted, as such a token calls no /api route */
const SCOPED_TOKEN_ROLE = 'viewer';
/** `--expires` unless given: the same 90 days as the data layer's default (DEFAULT_TOKEN_TTL_MS) */
export const DEFAULT_TOKEN_EXPIRES = '90d';

const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());

const EXPIRES_HINT = 'write how long it lasts ("90d", "30d", "12h"), a date or time ("2026-12-31", "2026-12-31T18:00:00Z"), or "never"';
// a date, or an ISO time with its zone (a time without one would be read in this machine's zone)
const ISO_WHEN = /^\d{4}-\d\d-\d\d(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d))?$/;

/**
 * When a token made at `now` stops being accepted, from `--expires`: a duration with days ("90d",
 * "12h"; lib/project/duration.ts), a date (its 00:00 UTC) or an ISO time, or `never` (null).
 * UsageError for anything else, or a time not after `now`.
 */
export function parseExpires(text: string, now: number): number | null {
  const t = text.trim();
  if (t.toLowerCase() === 'never') return null;
  const ms = parseDuration(t, { days: true });
  const at = ms !== null ? now + ms : ISO_WHEN.test(t) ? Date.parse(t) : NaN;
  if (Number.isNaN(at)) throw new UsageError(`--expires ${JSON.stringify(text)} is not a time: ${EXPIRES_HINT}`);
  if (at <= now) throw new UsageError(`--expires ${JSON.stringify(text)} is not in the future: ${EXPIRES_HINT}`);
  return at;
}

/**
 * `--scope` (null when not given), and what goes with it: a metrics token reads GET /metrics and
 * nothing else, so a role or a budget (what the runs it starts may spend) would mean nothing.
 */
export function parseScope(o: { scope?: string; role?: string; budget?: string }): TokenScope | null {
  if (o.scope === undefined) return null;
  const scope = o.scope.trim().toLowerCase();
  if (!(TOKEN_SCOPES as readonly string[]).includes(scope))
    throw new UsageError(`--scope ${JSON.stringify(o.scope)} is not a scope: use ${TOKEN_SCOPES.join(', ')} (a token that reads GET /metrics and nothing else)`);
  if (o.role !== undefined) throw new UsageError(`--role and --scope ${scope} do not go together: a ${scope} token calls no /api route, so it has no role`);
  if (o.budget !== undefined) throw new UsageError(`--budget and --scope ${scope} do not go together: a ${scope} token starts no runs`);
  return scope as TokenScope;
}

/** A daily budget from the command line (`5/day`, `none`); UsageError naming the option otherwise. */
export function parseBudgetOption(text: string, what: string): number | null {
  const usd = parseDailyBudget(text);
  if (usd === undefined) throw new UsageError(`${what} ${JSON.stringify(text)} is not a daily budget: ${BUDGET_HINT}`);
  return usd;
}

/** `never`, or the time and how far off it is (`expired` once past). */
function expiryWords(expiresAt: number | null, now: number): string {
  if (expiresAt === null) return 'It never expires (--expires never): revoke it once it is no longer needed.';
  return `It expires at ${iso(expiresAt)} (in ${fmtWait(expiresAt - now)}); make a new one before then.`;
}

/** Where the example sends it: the dashboard's public URL when one is set, else this machine on $PORT (3000, `aqven serve`'s default). */
function dashboardUrl(env: Readonly<Record<string, string | undefined>>): string {
  const pub = env.AQVEN_PUBLIC_URL?.trim();
  return pub ? pub.replace(/\/+$/, '') : `http://127.0.0.1:${env.PORT?.trim() || '3000'}`;
}

export interface TokenCreateOptions extends AccountCommandOptions {
  role?: string;
  createdBy?: string;
  /** `--expires`: a duration ("90d"), a date or ISO time, or "never" (default DEFAULT_TOKEN_EXPIRES) */
  expires?: string;
  /** `--budget`: USD per UTC day ("5/day"), or "none" (the default) */
  budget?: string;
  /** `--scope metrics`: a token that reads GET /metrics and nothing else */
  scope?: string;
}

/** How a new token is used: a service's on POST /api/runs, a scrape job's on GET /metrics. */
function usageLines(scope: TokenScope | null, url: string): string[] {
  if (scope === 'metrics')
    return [
      'Give it to Prometheus as the scrape job\'s bearer token (docs/monitoring.md, "Metrics"), or try it with the token in $AQVEN_TOKEN:',
      `  curl ${url}/metrics -H "Authorization: Bearer $AQVEN_TOKEN"`,
    ];
  return [
    'Send it on POST /api/runs as the header `Authorization: Bearer <token>`, e.g. with the token in $AQVEN_TOKEN:',
    `  curl -X POST ${url}/api/runs -H "Authorization: Bearer $AQVEN_TOKEN" -H 'Content-Type: application/json' -d '{"flow": "FLOW", "input": {}}'`,
  ];
}

/** `aqven token create NAME [--role R | --scope metrics] [--expires WHEN] [--budget USD/day]`: the token alone on its line, between what it is and how to use it. */
export async function runTokenCreate(name: string, opts: TokenCreateOptions, io: CliIo = processIo): Promise<number> {
  const now = (opts.now ?? Date.now)();
  let role: string;
  let scope: TokenScope | null;
  let expiresAt: number | null;
  let budgetUsdPerDay: number | null;
  try {
    normalizeName(name);
    scope = parseScope(opts);
    role = scope ? SCOPED_TOKEN_ROLE : (opts.role ?? DEFAULT_TOKEN_ROLE);
    checkRole(role);
    expiresAt = parseExpires(opts.expires ?? DEFAULT_TOKEN_EXPIRES, now);
    budgetUsdPerDay = opts.budget === undefined ? null : parseBudgetOption(opts.budget, '--budget');
  } catch (err) {
    return accountFailure('token create', err, io);
  }
  return withAccountsDb('token create', opts, io, async (db) => {
    const createdBy = opts.createdBy ?? cliAuthor();
    const { token, info } = await createToken(db, { name, role, createdBy, expiresAt, budgetUsdPerDay, scope }, now);
    const detail: Record<string, string | number | null> = scope ? { scope, expiresAt: iso(info.expiresAt) } : { role: info.role, expiresAt: iso(info.expiresAt), budgetUsdPerDay };
    await auditCli('token create', db, io, { kind: 'token.created', actor: createdBy, target: `token:${info.name}`, detail }, now);
    io.out(
      [
        `token ${info.name} created (${roleCell(info)}):`,
        token,
        'It will not be shown again: store it now (only its hash is kept).',
        expiryWords(info.expiresAt, now),
        ...(budgetUsdPerDay === null ? [] : [`The runs it starts may spend ${fmtBudget(budgetUsdPerDay)} (UTC days); past that they stop with E_BUDGET until 00:00 UTC.`]),
        ...usageLines(scope, dashboardUrl(opts.env ?? process.env)),
        '',
      ].join('\n'),
    );
    return 0;
  });
}

/** A token as listed: with what the runs it started spent today (UTC), against its budget. */
export type TokenListed = TokenInfo & { spentTodayUsd: number };

/** What a token may do, as listed: its role, or `metrics only` for a scoped one. */
const roleCell = (t: Pick<TokenInfo, 'role' | 'scope'>) => (t.scope ? `${t.scope} only` : t.role);

/** `never`, the time, or the time marked expired once it is past. */
const expiresCell = (t: TokenInfo, now: number) => (t.expiresAt === null ? 'never' : `${iso(t.expiresAt)}${t.expiresAt <= now ? ' (expired)' : ''}`);

export function formatTokens(tokens: TokenListed[], now: number = Date.now()): string {
  if (tokens.length === 0) return 'no tokens yet: make one with `aqven token create NAME`';
  const rows = [
    ['NAME', 'ROLE', 'CREATED BY', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED', 'SPENT TODAY'],
    ...tokens.map((t) => [
      t.name,
      roleCell(t),
      t.createdBy ?? '-',
      iso(t.createdAt)!,
      iso(t.lastUsedAt) ?? 'never',
      expiresCell(t, now),
      iso(t.revokedAt) ?? '-',
      fmtSpend(t.spentTodayUsd, t.budgetUsdPerDay),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** `aqven token list [--json]`: every token, revoked ones included, with its expiry and its spend today; never a token or its hash. */
export async function runTokenList(opts: AccountCommandOptions & { json?: boolean }, io: CliIo = processIo): Promise<number> {
  return withAccountsDb('token list', opts, io, async (db) => {
    const now = (opts.now ?? Date.now)();
    const stored = await listTokens(db);
    const spent = await spentToday(
      db,
      stored.map((t) => `token:${t.name}`),
      now,
    );
    const tokens = stored.map((t) => ({ ...t, spentTodayUsd: spent.get(`token:${t.name}`) ?? 0 }));
    if (opts.json) {
      const shown = tokens.map((t) => ({ ...t, createdAt: iso(t.createdAt), lastUsedAt: iso(t.lastUsedAt), revokedAt: iso(t.revokedAt), expiresAt: iso(t.expiresAt) }));
      io.out(`${JSON.stringify(shown, null, 2)}\n`);
    } else io.out(`${formatTokens(tokens, now)}\n`);
    return 0;
  });
}

/** `aqven token budget NAME USD/day|none`: what the runs the token starts may spend per UTC day, from now on. */
export async function runTokenBudget(name: string, budget: string, opts: AccountCommandOptions, io: CliIo = processIo): Promise<number> {
  let usd: number | null;
  try {
    normalizeName(name);
    usd = parseBudgetOption(budget, 'the budget');
  } catch (err) {
    return accountFailure('token budget', err, io);
  }
  return withAccountsDb('token budget', opts, io, async (db) => {
    const now = (opts.now ?? Date.now)();
    const set = await setTokenBudget(db, name, usd);
    // one kind for every budget an admin sets: the target says whose (a user's name, or `token:<name>`)
    await auditCli('token budget', db, io, { kind: 'user.budget-set', target: `token:${set.name}`, detail: { budgetUsdPerDay: set.budgetUsdPerDay } }, now);
    const today = (await spentToday(db, [`token:${set.name}`], now)).get(`token:${set.name}`) ?? 0;
    io.out(`token ${set.name}: budget ${fmtBudget(set.budgetUsdPerDay)} (spent today: ${fmtSpend(today, set.budgetUsdPerDay)})\n`);
    return 0;
  });
}

/** `aqven token revoke NAME`: refused from now on; revoking twice says so and changes nothing. */
export async function runTokenRevoke(name: string, opts: AccountCommandOptions, io: CliIo = processIo): Promise<number> {
  try {
    normalizeName(name);
  } catch (err) {
    return accountFailure('token revoke', err, io);
  }
  return withAccountsDb('token revoke', opts, io, async (db) => {
    const now = (opts.now ?? Date.now)();
    const r = await revokeToken(db, name, now);
    if (!r.already) await auditCli('token revoke', db, io, { kind: 'token.revoked', target: `token:${r.name}` }, now);
    io.out(r.already ? `token ${r.name} was already revoked (${iso(r.revokedAt)})\n` : `token ${r.name} revoked\n`);
    return 0;
  });
}

export function registerTokens(program: Command, io: CliIo = processIo): Command {
  const token = program.command('token').description('API tokens for services calling POST /api/runs, and for scraping GET /metrics: create, list, revoke, budget');

  token
    .command('create')
    .description('make a token and print it once (only its hash is stored)')
    .argument('<name>', 'what the token is for: lowercase letters, digits, ".", "_", "-"')
    .option('--role <role>', `${ROLES.join(' | ')} (default ${DEFAULT_TOKEN_ROLE})`)
    .option('--scope <scope>', "metrics: a token that reads GET /metrics and nothing else (a Prometheus scrape job's), with no role or budget")
    .option('--expires <when>', 'how long it is accepted: "90d", "30d", "12h", a date or ISO time, or "never"', DEFAULT_TOKEN_EXPIRES)
    .option('--budget <usd>', 'what the runs it starts may spend per UTC day, e.g. "5/day" (default: no budget)')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { role?: string; scope?: string; expires: string; budget?: string; project?: string }) => io.exit(await runTokenCreate(name, opts, io)));

  token
    .command('list')
    .description('the tokens: name, role, who made it and when, last use, expiry, revoked, spent today against its budget (never the token)')
    .option('--json', 'print JSON')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (opts: { json?: boolean; project?: string }) => io.exit(await runTokenList(opts, io)));

  token
    .command('revoke')
    .description('refuse a token from now on')
    .argument('<name>', 'the token name')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { project?: string }) => io.exit(await runTokenRevoke(name, opts, io)));

  token
    .command('budget')
    .description('set what the runs a token starts may spend per UTC day ("5/day"), or "none"')
    .argument('<name>', 'the token name')
    .argument('<budget>', 'USD per UTC day, e.g. "5/day", or "none"')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, budget: string, opts: { project?: string }) => io.exit(await runTokenBudget(name, budget, opts, io)));
  return token;
}
