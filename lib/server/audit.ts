// The dashboard's door to the audit trail (DESIGN: The dashboard, "Audit trail"): a server action
// or route handler records an event after its change, with the address the request came from
// (peerAddress: known under `aqven serve` or a trusted proxy, else null). A row that cannot be
// written is said in the server's log and leaves the action's own answer as it was.
import 'server-only';
import { headers as requestHeaders } from 'next/headers';
import { findUserByName } from '@/db/account-queries';
import { recordAuditOrWarn, type AuditEvent } from '@/db/audit-queries';
import type { Db } from '@/db/types';
import { peerAddress } from './access';

/** Records `e` with the request's address; `h` when the caller has the headers at hand (a route handler's request). */
export async function auditRequest(db: Db, e: Omit<AuditEvent, 'address'>, h?: Headers): Promise<boolean> {
  let address: string | null = null;
  try {
    address = peerAddress(h ?? (await requestHeaders()));
  } catch {
    // outside a request (no headers): the event is kept without an address
  }
  return recordAuditOrWarn(db, { ...e, address }, (line) => console.error(`aqven: ${line}`));
}

/**
 * A sign-in refused for a wrong name or password: the name is the target only when an account has
 * it — an unknown one may be a password typed into the name field, and is never stored.
 */
export async function auditSignInFailed(db: Db, name: string, h?: Headers): Promise<boolean> {
  const known = await findUserByName(db, name).catch(() => null);
  return auditRequest(db, { kind: 'sign-in.failed', actor: null, target: known ? known.name : null, detail: known ? null : { account: 'unknown' } }, h);
}
