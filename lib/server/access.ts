// Who may change things from the dashboard (DESIGN: The dashboard): the one home of the role check
// every server action that starts, cancels or edits something calls first. There are no user
// accounts yet, so anyone who can reach the dashboard is an editor; accounts and roles plug in here.
import 'server-only';

/** Why the caller may not act as an editor, or null when they may. */
export async function editorRefusal(): Promise<string | null> {
  return null;
}
