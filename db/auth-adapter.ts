// better-auth's view of the accounts' tables (DESIGN: The dashboard, "Accounts, roles and tokens"):
// its drizzle adapter over `db`, told the database's own SQL flavour — the one thing better-auth asks
// of the database that only db/ answers.
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import type { Db } from './types';

/** better-auth's drizzle adapter (its factory) over the users, sessions, accounts and verifications of `db`. */
export function authDatabaseAdapter(db: Db): ReturnType<typeof drizzleAdapter> {
  return drizzleAdapter(db.q, {
    provider: db.dialect,
    schema: { user: db.t.users, session: db.t.sessions, account: db.t.accounts, verification: db.t.verifications },
  });
}
