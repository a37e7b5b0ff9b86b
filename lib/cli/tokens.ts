// `aqven token create NAME [--role R]`, `aqven token list [--json]`, `aqven token revoke NAME`
// (DESIGN: CLI; The dashboard, "Accounts, roles and tokens"): the keys services present as
// `Authorization: Bearer …` on POST /api/runs. A token is printed once, when it is made; only its
// sha256 is stored, and neither is ever listed. Exit statuses as for `aqven user`: 0 done, 1 refused
// (the name is taken, no such token), 2 bad usage, 3 the database cannot be opened or reached.
import type { Command } from 'commander';
import { checkRole, createToken, listTokens, normalizeName, revokeToken, ROLES, type TokenInfo } from '@/db/account-queries';
import { cliAuthor } from '@/db/snapshot-queries';
import { type CliIo, processIo } from './io';
import { accountFailure, PROJECT_OPTION, withAccountsDb, type AccountCommandOptions } from './users';

export const DEFAULT_TOKEN_ROLE = 'editor';

const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());

/** Where the example sends it: the dashboard's public URL when one is set, else this machine on $PORT (3000, `aqven serve`'s default). */
function dashboardUrl(env: Readonly<Record<string, string | undefined>>): string {
  const pub = env.AQVEN_PUBLIC_URL?.trim();
  return pub ? pub.replace(/\/+$/, '') : `http://127.0.0.1:${env.PORT?.trim() || '3000'}`;
}

/** `aqven token create NAME [--role R]`: the token alone on its line, between what it is and how to use it. */
export async function runTokenCreate(name: string, opts: AccountCommandOptions & { role?: string; createdBy?: string }, io: CliIo = processIo): Promise<number> {
  const role = opts.role ?? DEFAULT_TOKEN_ROLE;
  try {
    normalizeName(name);
    checkRole(role);
  } catch (err) {
    return accountFailure('token create', err, io);
  }
  return withAccountsDb('token create', opts, io, async (db) => {
    const { token, info } = await createToken(db, { name, role, createdBy: opts.createdBy ?? cliAuthor() }, (opts.now ?? Date.now)());
    io.out(
      [
        `token ${info.name} created (${info.role}):`,
        token,
        'It will not be shown again: store it now (only its hash is kept).',
        'Send it on POST /api/runs as the header `Authorization: Bearer <token>`, e.g. with the token in $AQVEN_TOKEN:',
        `  curl -X POST ${dashboardUrl(opts.env ?? process.env)}/api/runs -H "Authorization: Bearer $AQVEN_TOKEN" -H 'Content-Type: application/json' -d '{"flow": "FLOW", "input": {}}'`,
        '',
      ].join('\n'),
    );
    return 0;
  });
}

export function formatTokens(tokens: TokenInfo[]): string {
  if (tokens.length === 0) return 'no tokens yet: make one with `aqven token create NAME`';
  const rows = [
    ['NAME', 'ROLE', 'CREATED BY', 'CREATED', 'LAST USED', 'REVOKED'],
    ...tokens.map((t) => [t.name, t.role, t.createdBy ?? '-', iso(t.createdAt)!, iso(t.lastUsedAt) ?? 'never', iso(t.revokedAt) ?? '-']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** `aqven token list [--json]`: every token, revoked ones included; never a token or its hash. */
export async function runTokenList(opts: AccountCommandOptions & { json?: boolean }, io: CliIo = processIo): Promise<number> {
  return withAccountsDb('token list', opts, io, async (db) => {
    const tokens = await listTokens(db);
    if (opts.json) {
      const shown = tokens.map((t) => ({ ...t, createdAt: iso(t.createdAt), lastUsedAt: iso(t.lastUsedAt), revokedAt: iso(t.revokedAt) }));
      io.out(`${JSON.stringify(shown, null, 2)}\n`);
    } else io.out(`${formatTokens(tokens)}\n`);
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
    const r = await revokeToken(db, name, (opts.now ?? Date.now)());
    io.out(r.already ? `token ${r.name} was already revoked (${iso(r.revokedAt)})\n` : `token ${r.name} revoked\n`);
    return 0;
  });
}

export function registerTokens(program: Command, io: CliIo = processIo): Command {
  const token = program.command('token').description('API tokens for services calling POST /api/runs: create, list, revoke');

  token
    .command('create')
    .description('make a token and print it once (only its hash is stored)')
    .argument('<name>', 'what the token is for: lowercase letters, digits, ".", "_", "-"')
    .option('--role <role>', ROLES.join(' | '), DEFAULT_TOKEN_ROLE)
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { role: string; project?: string }) => io.exit(await runTokenCreate(name, opts, io)));

  token
    .command('list')
    .description('the tokens: name, role, who made it and when, last use, revoked (never the token)')
    .option('--json', 'print JSON')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (opts: { json?: boolean; project?: string }) => io.exit(await runTokenList(opts, io)));

  token
    .command('revoke')
    .description('refuse a token from now on')
    .argument('<name>', 'the token name')
    .option('--project <dir>', PROJECT_OPTION)
    .action(async (name: string, opts: { project?: string }) => io.exit(await runTokenRevoke(name, opts, io)));
  return token;
}
