// A signed-in browser's cookie for a test that drives the dashboard's pages, forms or routes
// outside Next.js: the user signs in through better-auth as the login form does, and the cookie it
// sets is what the next request carries (DESIGN: The dashboard, "Accounts, roles and tokens").
import { loginEmail } from '@/db/account-queries';
import type { Db } from '@/db/types';
import { authFor } from '@/lib/server/auth';

/** `name=value` of the session cookie a sign-in of `name` with `password` sets. */
export async function sessionCookie(db: Db, name: string, password: string): Promise<string> {
  const res = await (await authFor(db)).api.signInEmail({ body: { email: loginEmail(name), password }, asResponse: true });
  const set = res.headers.getSetCookie().find((c) => c.includes('session_token='));
  if (!res.ok || !set) throw new Error(`sign-in of ${name} failed: ${res.status}`);
  return set.split(';')[0]!;
}

const TEST_PASSWORD = 'a long enough test password';

/** A new user of `role`, signed in: the cookie of their session. */
export async function signedInUser(db: Db, name: string, role: 'viewer' | 'editor' | 'admin', now = Date.now()): Promise<string> {
  const { createUser } = await import('@/db/account-queries');
  await createUser(db, { name, role, password: TEST_PASSWORD }, now);
  return sessionCookie(db, name, TEST_PASSWORD);
}

/**
 * The headers of a request from this machine (through `aqven serve`) carrying `credential`: an API
 * token (`aqven_…`) as `Authorization: Bearer`, a session cookie (`name=value`) as `Cookie`, or
 * nothing (null).
 */
export function requestHeaders(local: Readonly<Record<string, string>>, credential: string | null): Record<string, string> {
  if (!credential) return { ...local };
  return credential.startsWith('aqven_') || !credential.includes('=') ? { ...local, authorization: `Bearer ${credential}` } : { ...local, cookie: credential };
}
