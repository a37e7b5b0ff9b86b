// Pages open the server session through here: a project that fails `aqven check` is shown as its
// diagnostics (what to fix, where) instead of an opaque error page.
import 'server-only';
import { ProjectInvalidError, type Session } from '@/lib/flow/session';
import type { Diagnostic } from '@/lib/project';
import { dashboardContext } from './context';
import { serverSession } from './session';

export type PageSession = { ok: true; session: Session } | { ok: false; projectDir: string; message: string; diagnostics: Diagnostic[] };

export async function pageSession(): Promise<PageSession> {
  try {
    return { ok: true, session: await serverSession() };
  } catch (err) {
    const projectDir = dashboardContext().projectDir;
    if (err instanceof ProjectInvalidError) return { ok: false, projectDir, message: err.message, diagnostics: err.diagnostics };
    return { ok: false, projectDir, message: err instanceof Error ? err.message : String(err), diagnostics: [] };
  }
}
