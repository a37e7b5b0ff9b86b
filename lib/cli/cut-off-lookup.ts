// The lookup a command makes, before it exits, of the usage of its own run's answers cut off after
// a 2xx (DESIGN: Usage unknown, never zero; "Looked up afterwards"): `aqven run`, `aqven limits`,
// `aqven replay`. One pass, about 2 s at most; what is still pending is said with the command that
// finishes it — except under --simulate, where the pass settles them all (lookUpRunNow).
import type { Db } from '@/db/types';
import type { RunRecord } from '@/lib/flow/run-record';
import { getRunRecord } from '@/lib/flow/stored-run';
import { lookUpRunNow, type LookUpOptions } from '@/lib/flow/usage-lookup';

/** What of a session the pass reads: the run database, the providers and keys, and whether they are the simulator. */
export interface LookupSession {
  db: Db;
  providers: LookUpOptions['providers'];
  env: LookUpOptions['env'];
  simulated: unknown;
}

/** where the line on what is still pending goes: stderr, or a command's own (tests) */
type ErrLine = (line: string) => void;
const stderrLine: ErrLine = (line) => console.error(line);

/** One lookup pass for run `runId`; true when it looked anything up or gave any up (the run's stored record changed). */
export async function lookUpCutOff(command: string, s: LookupSession, runId: string, err: ErrLine = stderrLine): Promise<boolean> {
  const pass = await lookUpRunNow(s.db, { providers: s.providers, env: s.env, runId, timeoutMs: 1_500, simulated: s.simulated != null });
  if (pass.pending)
    err(`aqven ${command}: the usage of ${pass.pending} cut-off answer${pass.pending === 1 ? '' : 's'} is not known yet; \`aqven runs reconcile --wait 30\` looks it up`);
  return pass.looked > 0 || pass.gaveUp > 0;
}

/** A finished run's record, read back after the pass when some answer's usage was unknown and the pass changed anything. */
export async function recordAfterLookup(command: string, s: LookupSession, record: RunRecord, err: ErrLine = stderrLine): Promise<RunRecord> {
  if (!record.nodes.some((n) => n.attempts.some((a) => a.usageUnknown))) return record;
  if (!(await lookUpCutOff(command, s, record.id, err))) return record;
  return (await getRunRecord(s.db, record.id)) ?? record;
}
