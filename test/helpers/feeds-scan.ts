// The daily sums and failure signatures a history should have, computed by a direct scan of its
// attempts and node runs (what /agents read before the sums existed), beside what the sums hold:
// the tests of the run store's feeds and of the backfill compare the two on both dialects.
import { eq } from 'drizzle-orm';
import type { Db } from '@/db/types';
import { failureSignature } from '@/lib/shared/failure-signature';

const DAY = 86_400_000;
const dayOf = (ms: number) => Math.floor(ms / DAY) * DAY;
/** sums of costs differ in their last bits with the order they were added in */
const cost = (x: number) => Math.round(x * 1e9) / 1e9;

type Row = Record<string, string | number | null>;
const sortRows = (rows: Row[]) => rows.map((r) => ({ ...r })).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

function add(m: Map<string, Row>, key: unknown[], init: () => Row, f: (r: Row) => void) {
  const k = JSON.stringify(key);
  let r = m.get(k);
  if (!r) m.set(k, (r = init()));
  f(r);
}

/** Every fact of the history, flow runs marked. */
async function facts(db: Db) {
  const { attempts, nodeRuns, runs } = db.t;
  const atts = await db.q
    .select({
      id: attempts.id,
      agent: nodeRuns.agent,
      kind: runs.kind,
      model: attempts.model,
      outcome: attempts.outcome,
      cause: attempts.cause,
      action: attempts.action,
      errorMessage: attempts.errorMessage,
      inputTokens: attempts.inputTokens,
      outputTokens: attempts.outputTokens,
      costUsd: attempts.costUsd,
      startedAt: attempts.startedAt,
      finishedAt: attempts.finishedAt,
      failureSig: attempts.failureSig,
    })
    .from(attempts)
    .innerJoin(nodeRuns, eq(nodeRuns.id, attempts.nodeRunId))
    .innerJoin(runs, eq(runs.id, attempts.runId));
  const nodes = await db.q
    .select({
      id: nodeRuns.id,
      agent: nodeRuns.agent,
      kind: runs.kind,
      status: nodeRuns.status,
      code: nodeRuns.errorCode,
      message: nodeRuns.errorMessage,
      costUsd: nodeRuns.costUsd,
      startedAt: nodeRuns.startedAt,
      finishedAt: nodeRuns.finishedAt,
      runStartedAt: runs.startedAt,
      failureSig: nodeRuns.failureSig,
    })
    .from(nodeRuns)
    .innerJoin(runs, eq(runs.id, nodeRuns.runId));
  return { atts, nodes };
}

/** The sums a scan of the flow runs' attempts and node runs gives, and the signatures their facts give. */
export async function scanned(db: Db) {
  const { atts, nodes } = await facts(db);
  const agent = new Map<string, Row>();
  const node = new Map<string, Row>();
  const failure = new Map<string, Row>();
  const sigs: Record<string, string | null> = {};
  for (const a of atts) {
    const failed = a.outcome !== null && a.cause !== null;
    const sig = failed ? failureSignature({ level: 'attempt', agent: a.agent, model: a.model, code: a.cause!, message: a.errorMessage }) : null;
    sigs[a.id] = sig?.sig ?? null;
    if (a.kind !== 'flow' || a.outcome === null) continue;
    const day = dayOf(a.startedAt);
    add(
      agent,
      [a.agent, day, a.model, a.outcome, a.cause ?? '', a.action ?? 'none'],
      () => ({
        agent: a.agent,
        day,
        model: a.model,
        outcome: a.outcome,
        cause: a.cause ?? '',
        action: a.action ?? 'none',
        attempts: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        durationMs: 0,
      }),
      (r) => {
        (r.attempts as number)++;
        r.inputTokens = (r.inputTokens as number) + a.inputTokens;
        r.outputTokens = (r.outputTokens as number) + a.outputTokens;
        r.costUsd = (r.costUsd as number) + a.costUsd;
        r.durationMs = (r.durationMs as number) + ((a.finishedAt ?? a.startedAt) - a.startedAt);
      },
    );
    if (sig) {
      add(
        failure,
        [sig.sig, day],
        () => ({
          sig: sig.sig,
          day,
          level: 'attempt',
          agent: a.agent,
          model: a.model,
          code: a.cause,
          message: sig.normalised,
          failures: 0,
          costUsd: 0,
          firstAt: a.startedAt,
          lastAt: a.startedAt,
        }),
        (r) => {
          (r.failures as number)++;
          r.costUsd = (r.costUsd as number) + a.costUsd;
          r.firstAt = Math.min(r.firstAt as number, a.startedAt);
          r.lastAt = Math.max(r.lastAt as number, a.startedAt);
        },
      );
    }
  }
  for (const n of nodes) {
    const sig = n.status === 'failed' ? failureSignature({ level: 'node', agent: n.agent, model: '', code: n.code ?? '', message: n.message }) : null;
    sigs[n.id] = sig?.sig ?? null;
    if (n.kind !== 'flow' || !['succeeded', 'failed', 'skipped'].includes(n.status)) continue;
    const at = n.startedAt ?? n.finishedAt ?? n.runStartedAt;
    const day = dayOf(at);
    add(
      node,
      [n.agent, day, n.status],
      () => ({ agent: n.agent, day, status: n.status, nodes: 0, lastStartedAt: null }),
      (r) => {
        (r.nodes as number)++;
        if (n.startedAt !== null) r.lastStartedAt = Math.max((r.lastStartedAt as number | null) ?? -Infinity, n.startedAt);
      },
    );
    if (sig) {
      add(
        failure,
        [sig.sig, day],
        () => ({ sig: sig.sig, day, level: 'node', agent: n.agent, model: '', code: n.code ?? '', message: sig.normalised, failures: 0, costUsd: 0, firstAt: at, lastAt: at }),
        (r) => {
          (r.failures as number)++;
          r.costUsd = (r.costUsd as number) + n.costUsd;
          r.firstAt = Math.min(r.firstAt as number, at);
          r.lastAt = Math.max(r.lastAt as number, at);
        },
      );
    }
  }
  const costs = (rows: Row[]) => rows.map((r) => ('costUsd' in r ? { ...r, costUsd: cost(r.costUsd as number) } : r));
  return { agentDaily: sortRows(costs([...agent.values()])), nodeDaily: sortRows([...node.values()]), failureDaily: sortRows(costs([...failure.values()])), sigs };
}

/** What the sums hold, and the signatures stamped on the rows. */
export async function stored(db: Db) {
  const { agentDaily, failureDaily, nodeDaily } = db.t;
  const { atts, nodes } = await facts(db);
  const sigs: Record<string, string | null> = {};
  for (const x of [...atts, ...nodes]) sigs[x.id] = x.failureSig;
  const costs = (rows: Row[]) => rows.map((r) => ({ ...r, costUsd: cost(Number(r.costUsd)) }));
  return {
    agentDaily: sortRows(costs(await db.q.select().from(agentDaily))),
    nodeDaily: sortRows(await db.q.select().from(nodeDaily)),
    failureDaily: sortRows(costs(await db.q.select().from(failureDaily))),
    sigs,
  };
}
