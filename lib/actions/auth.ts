'use server';
// Sign in, sign out, change one's password (DESIGN: The dashboard, "Accounts, roles and tokens").
// better-auth does the checking and the session (lib/server/auth.ts); its nextCookies plugin sets
// and clears the cookie of the action's response.
import { isAPIError } from 'better-auth/api';
import { headers as requestHeaders } from 'next/headers';
import { redirect } from 'next/navigation';
import { AccountError, loginEmail, normalizeName, noteUserSeen } from '@/db/account-queries';
import type { PasswordState, SignInState } from '@/lib/forms/auth';
import { actionCaller, callerOf, isLocalPath, peerAddress } from '@/lib/server/access';
import { auditRequest, auditSignInFailed } from '@/lib/server/audit';
import { authFor } from '@/lib/server/auth';
import { signInLimit, signInSucceeded, signInUnchecked } from '@/lib/server/limits';
import { serverSession } from '@/lib/server/session';

/** Where to go after signing in: a path of this dashboard only (never another site). */
function landing(next: FormDataEntryValue | null): string {
  return typeof next === 'string' && isLocalPath(next) ? next : '/runs';
}

// the same words for an unknown name, a malformed one and a wrong password: nothing tells which names exist
const WRONG = { error: 'wrong name or password' };

export async function signInAction(_prev: SignInState, fd: FormData): Promise<SignInState> {
  const typed = String(fd.get('name') ?? '');
  const password = String(fd.get('password') ?? '');
  if (!typed.trim() || !password) return { error: 'enter your name and password' };
  let name: string;
  try {
    // a name no account can have is refused before anything is counted or hashed
    name = normalizeName(typed);
  } catch (err) {
    if (err instanceof AccountError) return WRONG;
    throw err;
  }
  const { db } = await serverSession();
  const h = await requestHeaders();
  const attempt = await signInLimit(db, name, peerAddress(h));
  if ('error' in attempt) return { error: attempt.error };
  try {
    await (await authFor(db)).api.signInEmail({ body: { email: loginEmail(name), password, rememberMe: true }, headers: h });
  } catch (err) {
    // a failure keeps its counts (signInLimit); anything else was not the caller's doing
    if (isAPIError(err)) await auditSignInFailed(db, name, h);
    if (isAPIError(err)) return WRONG;
    await signInUnchecked(db, attempt).catch(() => {}); // the database may be what failed: its error is the one to show
    throw err;
  }
  await signInSucceeded(db, attempt);
  await noteUserSeen(db, name, Date.now());
  await auditRequest(db, { kind: 'sign-in.ok', actor: name, target: name }, h);
  redirect(landing(fd.get('next')));
}

export async function signOutAction(): Promise<void> {
  const { db } = await serverSession();
  const h = await requestHeaders();
  // seen signing out: kept on the user row, which outlives the session ended here
  const who = await callerOf(db, h);
  if ('kind' in who && who.kind === 'user' && who.name) await noteUserSeen(db, who.name, Date.now());
  try {
    await (await authFor(db)).api.signOut({ headers: h });
  } catch (err) {
    // no session (already signed out, or revoked): nothing to end
    if (!isAPIError(err)) throw err;
  }
  if ('kind' in who && who.kind === 'user') await auditRequest(db, { kind: 'sign-out', actor: who.author, target: who.name }, h);
  redirect('/login');
}

export async function changePasswordAction(_prev: PasswordState, fd: FormData): Promise<PasswordState> {
  const who = await actionCaller('viewer');
  if (!who.ok) return { error: who.error };
  if (who.caller.kind !== 'user') return { error: 'only a signed-in user has a password to change' };
  const current = String(fd.get('current') ?? '');
  const next = String(fd.get('next') ?? '');
  if (next.length < 12) return { error: 'the new password must be at least 12 characters', field: 'next' };
  if (next.length > 128) return { error: 'the new password must be at most 128 characters', field: 'next' };
  if (next !== String(fd.get('repeat') ?? '')) return { error: 'the two new passwords differ', field: 'repeat' };
  const { db } = await serverSession();
  try {
    await (await authFor(db)).api.changePassword({ body: { currentPassword: current, newPassword: next, revokeOtherSessions: true }, headers: await requestHeaders() });
  } catch (err) {
    if (isAPIError(err)) return { error: /password/i.test(err.message) ? 'the current password is wrong' : err.message, field: 'current' };
    throw err;
  }
  // better-auth replaced this session with a new one (the old cookie is revoked with the others):
  // a fresh request renders the page under the new cookie
  await auditRequest(db, { kind: 'password.changed', actor: who.caller.author, target: who.caller.name, detail: { otherSessionsSignedOut: true } });
  redirect('/account?changed=1');
}
