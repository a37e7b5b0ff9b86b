// The dashboard's reads over a large history (SQLite): 100,000 runs, about 1,000,000 attempts and
// 1,000,000 node runs, seeded in one transaction with prepared statements — three flows of 3, 9 and
// 20 nodes, six agents, five models, about 10 % failed attempts drawn from a few dozen failure
// texts (their particulars varied), some runs failed, some routed around a failed node, a few still
// running, inputs of words. The daily sums, the search index and the failure signatures are then
// filled the way an older history gets them (the team-debugging migration's backfill SQL, then
// db/backfill.ts), so the reads below run the real read paths over real-sized tables.
//
// Ids are made as the product makes them (time-ordered UUID v7). Each read is timed over `--reps` repetitions (after two warm-ups): p50 and p95, in ms — once as
// the product runs today (SQLite has no statistics: no ANALYZE ever ran), once after ANALYZE
// (analysis_limit 1000: what `PRAGMA optimize` would keep) — against the targets: /runs p95 < 100 ms, /agents < 150 ms, failure groups < 200 ms, search < 200 ms, a
// run page of 200 attempts < 300 ms. Failure groups (db/failure-queries.ts) and search
// (db/search-queries.ts) are timed when those modules exist, else skipped with a note.
// `--runs N` seeds a smaller history for a quick try; `--keep` leaves the database file.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { agentModelStats, agentStats, recentAgentFailures } from '@/db/agent-queries';
import { backfillFailureSignatures } from '@/db/backfill';
import { closeDb, openDb } from '@/db/client';
import { migrationsFolder } from '@/db/migrations-folder';
import { filterChoices, getRunFacts, listRuns, type RunFilters } from '@/db/queries';
import { resolveRunId } from '@/db/run-id-queries';
import { shortRunId } from '@/lib/shared/short-id';
import type { Db, SqliteDb } from '@/db/types';
import { writeResult } from './write-result';

const DAY = 86_400_000;
const T_END = Date.UTC(2026, 10, 30);
const SPAN_DAYS = 90;

const MODELS = ['openrouter:google/gemini-2.5-flash-lite', 'openrouter:openai/gpt-oss-20b', 'anthropic:claude-haiku-4-5', 'openai:gpt-4.1-mini', 'gemini:gemini-2.5-flash'];
/** each agent's chain: a primary model and its fallback */
const CHAIN: Record<string, [string, string]> = {
  classifier: [MODELS[0]!, MODELS[1]!],
  writer: [MODELS[1]!, MODELS[2]!],
  extractor: [MODELS[3]!, MODELS[4]!],
  auditor: [MODELS[2]!, MODELS[3]!],
  summariser: [MODELS[4]!, MODELS[0]!],
  router: [MODELS[0]!, MODELS[3]!],
};
const nodesOf = (n: number, agents: readonly string[]) => Array.from({ length: n }, (_, i) => ({ id: `step_${i + 1}`, agent: agents[i % agents.length]! }));
const FLOWS = [
  {
    name: 'triage',
    share: 0.3,
    nodes: [
      { id: 'classify', agent: 'classifier' },
      { id: 'draft', agent: 'writer' },
      { id: 'manual_review', agent: 'writer' },
    ],
  },
  { name: 'extract', share: 0.4, nodes: nodesOf(9, ['extractor', 'auditor', 'router', 'summariser']) },
  { name: 'research', share: 0.3, nodes: nodesOf(20, ['router', 'extractor', 'summariser', 'writer', 'auditor']) },
];
const WORDS = (
  'invoice refund charged twice subscription renewal password reset login locked account billing address card declined shipping delayed ' +
  'package damaged warranty replacement upgrade downgrade plan cancel trial export data privacy request deletion api key rotate webhook ' +
  'timeout error dashboard slow report missing chart latency outage region europe tokyo sydney quota limit exceeded support ticket urgent ' +
  'customer enterprise contract seats license renewal discount coupon tax vat receipt pdf email notification spam unsubscribe mobile app ' +
  'crash android ios update version integration slack salesforce zapier import csv spreadsheet column mapping duplicate records merge'
).split(' ');

type Cause = 'provider_error' | 'refusal' | 'truncated' | 'invalid_output';
/** failure texts as the engine words them; `#` is replaced by a particular (an id, a count) each time */
const FAILURES: { cause: Cause; outcome: 'ok' | 'error' | 'refusal' | 'truncated'; kind: string; text: string }[] = [
  { cause: 'provider_error', outcome: 'error', kind: 'provider_error', text: 'MODEL ended the response with an error (finish reason error): upstream overloaded (request req_#)' },
  { cause: 'provider_error', outcome: 'error', kind: 'provider_error', text: 'MODEL ended the response with an error (finish reason error): Internal server error' },
  { cause: 'provider_error', outcome: 'error', kind: 'transport', text: 'MODEL could not be reached: connect ECONNREFUSED 10.0.3.#:443' },
  { cause: 'provider_error', outcome: 'error', kind: 'transport', text: 'MODEL did not complete the response: the body stopped after # bytes' },
  { cause: 'provider_error', outcome: 'error', kind: 'transport', text: 'MODEL could not be reached: no response within # ms (timeout)' },
  { cause: 'provider_error', outcome: 'error', kind: 'client_error', text: 'MODEL rejected the request: 400 max_tokens: # > 8192, which is the maximum allowed' },
  { cause: 'refusal', outcome: 'refusal', kind: 'refusal', text: 'MODEL refused to answer (finish reason content_filter)' },
  { cause: 'refusal', outcome: 'refusal', kind: 'refusal', text: 'MODEL refused to answer (finish reason SAFETY)' },
  { cause: 'truncated', outcome: 'truncated', kind: 'truncated', text: "MODEL's answer was cut off (finish reason length)" },
  {
    cause: 'invalid_output',
    outcome: 'ok',
    kind: 'invalid_output',
    text: `MODEL's answer does not match the node's output schema: /queue must be equal to one of the allowed values`,
  },
  {
    cause: 'invalid_output',
    outcome: 'ok',
    kind: 'invalid_output',
    text: `MODEL's answer does not match the node's output schema: (root) must have required property 'confidence'`,
  },
  {
    cause: 'invalid_output',
    outcome: 'ok',
    kind: 'invalid_output',
    text: `MODEL's answer does not match the node's output schema: (root) Unexpected token 'S', "Sure! Here"... is not valid JSON`,
  },
];

/** mulberry32: the same history on every run of the bench */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedHistory(db: SqliteDb, runs: number) {
  const rnd = prng(20261130);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('');
  // ids as the product makes them (lib/shared/record-id.ts): UUID v7, the time in ms first
  const uuid = (at: number) => {
    const ms = Math.max(0, Math.floor(at)).toString(16).padStart(12, '0');
    return `${ms.slice(0, 8)}-${ms.slice(8)}-7${hex(3)}-8${hex(3)}-${hex(12)}`;
  };
  const c = db.$client;
  const insRun = c.prepare(
    `INSERT INTO runs (id, project, flow, status, input, output, error_code, error_node, error_message, turns, input_tokens, output_tokens, cost_usd, started_at, finished_at, started_by)
     VALUES (?, 'bench', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)`,
  );
  const insNode = c.prepare(
    `INSERT INTO node_runs (id, run_id, node_id, agent, turn, status, output, error_code, error_message, hint, input_tokens, output_tokens, cost_usd, started_at, finished_at, ord)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insAttempt = c.prepare(
    `INSERT INTO attempts (id, node_run_id, run_id, seq, model, chain_index, answer_no, outcome, finish_reason, cause, action, request, response_text, error_kind, error_message, validation_errors, discarded, input_tokens, output_tokens, cost_usd, started_at, finished_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let attempts = 0;
  let nodeRuns = 0;
  const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const oneRun = (i: number, opts: { big?: boolean; running?: boolean } = {}) => {
    const r = rnd();
    const flow = opts.big ? FLOWS[2]! : r < FLOWS[0]!.share ? FLOWS[0]! : r < FLOWS[0]!.share + FLOWS[1]!.share ? FLOWS[1]! : FLOWS[2]!;
    const startedAt = opts.running ? T_END - int(1_000, 60_000) : T_END - SPAN_DAYS * DAY + Math.floor((i / runs) * SPAN_DAYS * DAY) + int(0, 5_000);
    const id = opts.big ? 'big-run' : uuid(startedAt);
    const ticket = sentence(int(8, 30));
    const input = JSON.stringify({ ticket, customer: `cus_${hex(10)}`, priority: pick(['low', 'normal', 'high']) });
    let t = startedAt;
    let runFailed = null as { code: string; node: string; message: string } | null;
    let routed = false;
    /** a running run: the nodes after its running one have no row yet */
    let reached = true;
    let tokensIn = 0;
    let tokensOut = 0;
    let cost = 0;
    const rows: unknown[][] = [];
    flow.nodes.forEach((node, ord) => {
      if (flow.name === 'triage' && node.id === 'manual_review' && !routed) {
        // reached only when classify failed (its on_fail route); skipped otherwise
        rows.push([uuid(t), id, node.id, node.agent, 0, 'skipped', null, null, null, null, 0, 0, 0, t, t, ord]);
        return;
      }
      if (!reached) return;
      if (runFailed) {
        rows.push([uuid(t), id, node.id, node.agent, 0, 'skipped', null, null, null, null, 0, 0, 0, t, t, ord]);
        return;
      }
      const nid = uuid(t);
      const chain = CHAIN[node.agent]!;
      const nodeStart = t;
      const running = opts.running && ord === 0;
      // most nodes answer at once; some fail one or more times first; a few fail for good
      // the big run: 20 nodes of 10 attempts, 200 in all
      const failures = opts.big ? 9 : rnd() < 0.07 ? int(1, 2) : 0;
      const givesUp = !opts.big && failures > 0 && rnd() < 0.2;
      let nIn = 0;
      let nOut = 0;
      let nCost = 0;
      let lastFailure = '';
      let lastCause: Cause = 'provider_error';
      for (let k = 0; k < failures + (givesUp ? 0 : 1); k++) {
        const failed = k < failures;
        const f = failed ? pick(FAILURES) : null;
        const fellBack = failed && f!.cause === 'provider_error' && rnd() < 0.4;
        const model = chain[k > 0 && rnd() < 0.3 ? 1 : 0]!;
        const ins = int(300, 2_500);
        const outs = f?.cause === 'truncated' ? 1024 : int(20, 600);
        const price = ins * 0.0000001 + outs * 0.0000004;
        const dur = int(200, 4_000);
        const message = f ? f.text.replace('MODEL', model).replace('#', String(int(1, 99_999))) : null;
        const last = k === failures - 1 && givesUp;
        const action = !failed ? 'none' : last ? 'none' : f!.cause === 'invalid_output' ? 'repair' : fellBack ? 'fallback' : 'retry';
        const issues = f?.cause === 'invalid_output' ? JSON.stringify([{ pointer: '/queue', message: 'must be equal to one of the allowed values' }]) : '[]';
        const request = JSON.stringify([{ role: 'user', content: `${node.id}: ${ticket.slice(0, 60)}` }]);
        const response =
          f?.outcome === 'ok' || !failed
            ? node.agent === 'writer'
              ? sentence(int(10, 40))
              : `{"queue":"${pick(['billing', 'tech', 'sales'])}","confidence":0.${int(10, 99)}}`
            : null;
        const inFlight = running && !failed;
        insAttempt.run(
          uuid(t),
          nid,
          id,
          k + 1,
          model,
          model === chain[0] ? 0 : 1,
          k + 1,
          inFlight ? null : (f?.outcome ?? 'ok'),
          inFlight ? null : failed ? (f!.cause === 'refusal' ? 'content_filter' : f!.cause === 'truncated' ? 'length' : 'stop') : 'stop',
          inFlight ? null : (f?.cause ?? null),
          inFlight ? null : action,
          request,
          inFlight ? null : response,
          f?.kind ?? null,
          message,
          issues,
          failed ? 1 : 0,
          ins,
          outs,
          price,
          t,
          inFlight ? null : t + dur,
        );
        attempts++;
        t += dur + 5;
        nIn += ins;
        nOut += outs;
        nCost += price;
        if (failed) {
          lastFailure = message!;
          lastCause = f!.cause;
        }
      }
      nodeRuns++;
      tokensIn += nIn;
      tokensOut += nOut;
      cost += nCost;
      if (running) {
        rows.push([nid, id, node.id, node.agent, 1, 'running', null, null, null, null, 0, 0, 0, nodeStart, null, ord]);
        reached = false;
        return;
      }
      if (givesUp) {
        rows.push([nid, id, node.id, node.agent, 1, 'failed', null, lastCause, lastFailure, 'Raise output.retries or add a fallback model', nIn, nOut, nCost, nodeStart, t, ord]);
        if (flow.name === 'triage' && node.id === 'classify') routed = true;
        else runFailed = { code: lastCause, node: node.id, message: lastFailure };
        return;
      }
      const output = node.agent === 'writer' ? JSON.stringify(sentence(int(10, 40))) : JSON.stringify({ queue: pick(['billing', 'tech', 'sales']), confidence: rnd() });
      rows.push([nid, id, node.id, node.agent, 1, 'succeeded', output, null, null, null, nIn, nOut, nCost, nodeStart, t, ord]);
    });
    if (opts.running) {
      insRun.run(id, flow.name, 'running', input, null, null, null, null, tokensIn, tokensOut, cost, startedAt, null, 'cli:bench');
      for (const row of rows) insNode.run(...row);
      return;
    }
    const status = runFailed ? 'failed' : rnd() < 0.005 ? 'interrupted' : 'succeeded';
    insRun.run(
      id,
      flow.name,
      status,
      input,
      status === 'succeeded' ? '{"done":true}' : null,
      runFailed?.code ?? (status === 'interrupted' ? 'interrupted' : null),
      runFailed?.node ?? null,
      runFailed?.message ?? null,
      tokensIn,
      tokensOut,
      cost,
      startedAt,
      t,
      pick(['ana', 'token:ci', 'cli:ops']),
    );
    for (const row of rows) insNode.run(...row);
  };
  const t0 = performance.now();
  // consistent by construction (a run's attempts are written before its row): no key checks while
  // seeding; a large page cache for the inserts (the run-id tail index is random), back to the default after
  c.pragma('foreign_keys = OFF');
  const cache = c.pragma('cache_size', { simple: true });
  c.pragma('cache_size = -262144');
  c.transaction(() => {
    for (let i = 0; i < runs; i++) oneRun(i);
    oneRun(runs, { big: true });
    for (let i = 0; i < 20; i++) oneRun(runs, { running: true });
  })();
  c.pragma('foreign_keys = ON');
  c.pragma(`cache_size = ${Number(cache)}`);
  return { ms: Math.round(performance.now() - t0), attempts, nodeRuns };
}

/** The team-debugging migration's backfill statements (hand-written SQL after its "Backfill" comment), run as a migration runs them. */
export function backfillSql(db: SqliteDb): number {
  const text = readFileSync(join(migrationsFolder('sqlite'), '0008_team_debugging.sql'), 'utf8');
  const at = text.indexOf('-- Backfill (hand-written)');
  if (at < 0) throw new Error('the team-debugging migration has no backfill section');
  const t0 = performance.now();
  db.$client.transaction(() => {
    for (const st of text.slice(at).split('--> statement-breakpoint')) if (st.trim()) db.$client.exec(st);
  })();
  return Math.round(performance.now() - t0);
}

/**
 * p50 and p95 of `f` over `reps` runs after two warm-ups; a read whose warm-up takes over a second
 * (ten times any target) is timed 5 times only, so that the bench stays within minutes.
 */
async function time(reps: number, f: () => Promise<unknown>) {
  await f();
  const w0 = performance.now();
  await f();
  if (performance.now() - w0 > 1000) reps = Math.min(reps, 5);
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await f();
    xs.push(performance.now() - t0);
  }
  xs.sort((a, b) => a - b);
  const q = (p: number) => +xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!.toFixed(2);
  return { p50: q(0.5), p95: q(0.95), reps };
}
type Timed = Awaited<ReturnType<typeof time>>;

/** An optional module of another part of the dashboard: its exports, or null when it is not there yet. */
async function optional(path: string): Promise<Record<string, unknown> | null> {
  if (!existsSync(resolve(process.cwd(), `${path}.ts`))) return null;
  return (await import(pathToFileURL(resolve(process.cwd(), `${path}.ts`)).href)) as Record<string, unknown>;
}

export async function runScaleBench(opts: { runs?: number; reps?: number; keep?: boolean } = {}) {
  const runs = opts.runs ?? 100_000;
  const reps = opts.reps ?? 20;
  const dir = mkdtempSync(join(tmpdir(), 'aqven-scale-reads-'));
  const path = join(dir, 'scale.db');
  const db = openDb(path);
  const log = (s: string) => console.log(`scale: ${s}`);

  const seeded = seedHistory(db, runs);
  log(`seeded ${runs.toLocaleString('en')} runs, ${seeded.nodeRuns.toLocaleString('en')} node runs, ${seeded.attempts.toLocaleString('en')} attempts in ${seeded.ms} ms`);
  const sqlMs = backfillSql(db);
  const t1 = performance.now();
  const stamped = await backfillFailureSignatures(db);
  const sigMs = Math.round(performance.now() - t1);
  log(
    `backfill: sums and search index ${sqlMs} ms; failure signatures ${sigMs} ms (${stamped.attempts.toLocaleString('en')} attempts, ${stamped.nodes.toLocaleString('en')} nodes)`,
  );
  db.$client.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = statSync(path).size;
  const count = (t: string) => (db.$client.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
  const rows = {
    runs: count('runs'),
    nodeRuns: count('node_runs'),
    attempts: count('attempts'),
    failedAttempts: (db.$client.prepare('SELECT count(*) AS n FROM attempts WHERE cause IS NOT NULL').get() as { n: number }).n,
    searchDocs: count('search_docs'),
    agentDaily: count('agent_daily'),
    nodeDaily: count('node_daily'),
    failureDaily: count('failure_daily'),
    failureSignatures: (db.$client.prepare('SELECT count(DISTINCT sig) AS n FROM failure_daily').get() as { n: number }).n,
  };
  log(`database ${(bytes / 1024 / 1024).toFixed(0)} MiB; ${JSON.stringify(rows)}`);

  const d: Db = db;
  const failures = await optional('db/failure-queries');
  const search = await optional('db/search-queries');
  const notes: string[] = [];
  if (!failures) notes.push('failure groups: db/failure-queries.ts is not there yet: skipped');
  if (!search) notes.push('search: db/search-queries.ts is not there yet: skipped');
  for (const n of notes) log(n);

  // as the product runs today (no ANALYZE ever ran), then with statistics (what `PRAGMA optimize` would keep)
  const asIs = await readPass(d, reps, { failures, search });
  for (const t of asIs.targets) log(`no statistics: ${t.read}: p95 ${t.p95} ms (target < ${t.targetMs}) ${t.met ? 'met' : 'MISSED'}`);
  const a0 = performance.now();
  db.$client.pragma('analysis_limit = 1000');
  db.$client.exec('ANALYZE');
  const analyzeMs = Math.round(performance.now() - a0);
  log(`ANALYZE (analysis_limit 1000): ${analyzeMs} ms`);
  const analysed = await readPass(d, reps, { failures, search });
  for (const t of analysed.targets) log(`with statistics: ${t.read}: p95 ${t.p95} ms (target < ${t.targetMs}) ${t.met ? 'met' : 'MISSED'}`);

  await closeDb(path);
  if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  else log(`kept ${path}`);
  const result = {
    runs,
    reps,
    seedMs: seeded.ms,
    backfill: { sumsAndSearchMs: sqlMs, failureSignaturesMs: sigMs, stamped },
    databaseMiB: +(bytes / 1024 / 1024).toFixed(1),
    rows,
    noStatistics: asIs,
    withStatistics: { analyzeMs, ...analysed },
    notes,
  };
  writeResult('scale', result);
  return result;
}

/** Every read of the dashboard pages timed once over the history: p50/p95 per read, and each page's worst against its target. */
async function readPass(d: Db, reps: number, optional: { failures: Record<string, unknown> | null; search: Record<string, unknown> | null }) {
  const lists: Record<string, RunFilters> = {
    all: {},
    failed: { status: 'failed' },
    flow: { flow: 'triage' },
    agent: { agent: 'auditor' },
    model: { model: MODELS[4]! },
    cause: { cause: 'refusal' },
    retried: { retried: true },
    fellBack: { fellBack: true },
    lastWeek: { from: T_END - 7 * DAY, to: T_END },
    failedTriageRefusals: { status: 'failed', flow: 'triage', cause: 'refusal' },
  };
  const reads: Record<string, Timed> = {};
  for (const [name, filters] of Object.entries(lists)) reads[`runs.list.${name}`] = await time(reps, () => listRuns(d, { filters, limit: 50 }));
  const first = await listRuns(d, { limit: 50 });
  reads['runs.list.secondPage'] = await time(reps, () => listRuns(d, { limit: 50, cursor: first.nextCursor }));
  reads['runs.filterChoices'] = await time(reps, () => filterChoices(d));
  // a run named by its short id (the start of its id's random last group) and by a prefix of its id
  const named = first.items[Math.min(10, first.items.length - 1)]!.id;
  reads['runs.byShortId'] = await time(reps, () => resolveRunId(d, shortRunId(named)));
  reads['runs.byIdPrefix'] = await time(reps, () => resolveRunId(d, named.slice(0, 13)));
  reads['runs.page'] = await time(reps, () => Promise.all([filterChoices(d), listRuns(d, { limit: 50 })]));
  reads['agents.page'] = await time(reps, () => agentStats(d));
  reads['agent.stats'] = await time(reps, () => agentStats(d, { agent: 'writer' }));
  reads['agent.models'] = await time(reps, () => agentModelStats(d, 'writer'));
  reads['agent.recentFailures'] = await time(reps, () => recentAgentFailures(d, 'writer'));
  reads['agent.page'] = await time(reps, () => Promise.all([agentStats(d, { agent: 'writer' }), agentModelStats(d, 'writer'), recentAgentFailures(d, 'writer')]));
  const big = await getRunFacts(d, 'big-run');
  const bigAttempts = big?.nodes.reduce((n, x) => n + x.attempts.length, 0) ?? 0;
  reads['run.page200'] = await time(reps, () => getRunFacts(d, 'big-run'));
  if (optional.failures) for (const [name, f] of failureReads(d, optional.failures)) reads[`failures.${name}`] = await time(reps, f);
  if (optional.search) for (const [name, f] of searchReads(d, optional.search)) reads[`search.${name}`] = await time(reps, f);

  const worst = (prefix: string) =>
    Math.max(
      ...Object.entries(reads)
        .filter(([k]) => k.startsWith(prefix))
        .map(([, v]) => v.p95),
    );
  const targets = [
    { read: '/runs (each list; the page with filterChoices)', p95: worst('runs.'), targetMs: 100 },
    { read: '/agents', p95: reads['agents.page']!.p95, targetMs: 150 },
    { read: '/agents/[name] (the sums, models, recent failures)', p95: reads['agent.page']!.p95, targetMs: 150 },
    ...(optional.failures ? [{ read: 'failure groups', p95: worst('failures.'), targetMs: 200 }] : []),
    ...(optional.search ? [{ read: 'search', p95: worst('search.'), targetMs: 200 }] : []),
    { read: `run page (${bigAttempts} attempts)`, p95: reads['run.page200']!.p95, targetMs: 300 },
  ].map((t) => ({ ...t, met: t.p95 < t.targetMs }));
  return { readsMs: reads, targets };
}

type Read = [string, () => Promise<unknown>];

/** The failure-group reads of db/failure-queries.ts: a week of whole days, the last 24 hours (partial days), one agent over the 90 days. */
function failureReads(db: Db, m: Record<string, unknown>): Read[] {
  const out: Read[] = [];
  const groups = m.failureGroups as ((db: Db, o: { since: number; until?: number; agent?: string }) => Promise<{ sig: string }[]>) | undefined;
  if (typeof groups === 'function') {
    out.push(['groups.week', () => groups(db, { since: T_END - 7 * DAY, until: T_END })]);
    out.push(['groups.last24h', () => groups(db, { since: T_END - DAY + 5 * 3_600_000, until: T_END + 5 * 3_600_000 })]);
    out.push(['groups.90days.writer', () => groups(db, { since: T_END - 90 * DAY, until: T_END, agent: 'writer' })]);
  }
  const agents = m.failureAgents as ((db: Db, since?: number) => Promise<unknown>) | undefined;
  if (typeof agents === 'function') out.push(['agents', () => agents(db, T_END - 7 * DAY)]);
  return out;
}

/** The search reads of db/search-queries.ts (each `search…` export, called with the query text): a common word, a rarer pair, a phrase of failure text. */
function searchReads(db: Db, m: Record<string, unknown>): Read[] {
  const out: Read[] = [];
  for (const [name, f] of Object.entries(m)) {
    if (typeof f !== 'function' || !/^search/i.test(name)) continue;
    for (const q of ['invoice', 'zapier duplicate', 'upstream overloaded'])
      out.push([`${name}(${q})`, () => (f as (db: Db, q: unknown) => Promise<unknown>)(db, { q, query: q, text: q })]);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, reps: { type: 'string' }, keep: { type: 'boolean' } } });
  runScaleBench({ runs: values.runs ? Number(values.runs) : undefined, reps: values.reps ? Number(values.reps) : undefined, keep: values.keep }).then((r) =>
    console.log(JSON.stringify({ noStatistics: r.noStatistics.targets, withStatistics: r.withStatistics.targets }, null, 2)),
  );
}
