// Pages open the server session through here: the caller is checked first (DESIGN: The dashboard,
// "Accounts, roles and tokens": nobody signed in → the login page), and a project that fails
// `aqven check` is shown as its diagnostics (what to fix, where) instead of an opaque error page,
// to a caller on this machine or signed in.
import 'server-only';
import { headers as requestHeaders } from 'next/headers';
import { redirect } from 'next/navigation';
import { ProjectInvalidError, type Session } from '@/lib/flow/session';
import type { Diagnostic } from '@/lib/project';
import { fromThisMachine, loginUrl, pageCaller, type Caller, type Role } from './access';
import { dashboardContext } from './context';
import { serverSession } from './session';

export type PageSession = { ok: true; session: Session; caller: Caller } | { ok: false; projectDir: string; message: string; diagnostics: Diagnostic[] };

/** The session and the page's caller, who has at least `role` (else redirected: to /login, or to /runs). */
export async function pageSession(role: Role = 'viewer'): Promise<PageSession> {
  let session: Session;
  try {
    session = await serverSession();
  } catch (err) {
    // without the project there is no database to check a session against: this machine only
    const h = await requestHeaders();
    if (!fromThisMachine(h)) redirect(loginUrl(h));
    const projectDir = dashboardContext().projectDir;
    if (err instanceof ProjectInvalidError) return { ok: false, projectDir, message: err.message, diagnostics: err.diagnostics };
    return { ok: false, projectDir, message: err instanceof Error ? err.message : String(err), diagnostics: [] };
  }
  return { ok: true, session, caller: await pageCaller(role) };
}
