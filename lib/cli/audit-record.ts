// The CLI's door to the audit trail (DESIGN: The dashboard, "Audit trail"): a command that changed
// something records it after the change, as `cli:<login>` (the login of whoever ran it, as a token's
// `created by` says), with no address. A row that cannot be written is a warning on stderr; the
// command's own exit status stands (its change was made).
import { recordAuditOrWarn, type AuditEvent } from '@/db/audit-queries';
import { cliAuthor } from '@/db/snapshot-queries';
import type { Db } from '@/db/types';
import type { CliIo } from './io';

export async function auditCli(command: string, db: Db, io: CliIo, e: Omit<AuditEvent, 'actor' | 'address'> & { actor?: string }, now: number = Date.now()): Promise<boolean> {
  return recordAuditOrWarn(db, { ...e, actor: e.actor ?? cliAuthor(), address: null }, (line) => io.err(`aqven ${command}: warning: ${line}\n`), now);
}
