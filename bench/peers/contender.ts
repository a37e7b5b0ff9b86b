// One contender of the peer benchmark, in a process of its own (forked by run.ts with an IPC
// channel): `tsx bench/peers/contender.ts KIND BASE_URL`. It sets up (project, database, client),
// says `ready`, then runs each workload it is sent and reports, per call, whether it handed an
// object to its caller, which one, when, and the tokens the caller can see.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseRetryAfter } from '@/lib/engine/retry-after';
import { PROVIDER_DEFAULTS } from '@/lib/project/builtin-providers';
import type { RunStore } from '@/db/run-store';
import type { SqliteDb } from '@/db/types';
import { MODEL } from './workloads';
import { oneNodeProject } from '../one-node-project';

export const CONTENDERS = ['ai-generateObject', 'ai-generateText', 'openai-parse', 'aqven', 'aqven-recorded', 'aqven-writer-thread', 'fetch', 'rule-floor'] as const;
export type ContenderKind = (typeof CONTENDERS)[number];

export interface CallResult {
  call: number;
  /** an object was handed to the caller */
  returned: boolean;
  /** its `queue` (the fake's good answers say billing, W2's bad ones sales) */
  queue?: string;
  /** epoch ms the call ended (performance.timeOrigin based, comparable with the fake's log) */
  doneAt: number;
  /** tokens (input + output) the caller can see for this call, from the result or the error */
  visibleTokens: number;
  /** a short reason when nothing was returned */
  error?: string;
  /** AQVEN: attempts its run record marks usage unknown (cut off before the usage arrived) */
  usageUnknownAttempts?: number;
  /** AQVEN: ms waited before its tries (backoff and the rate-limit gate), by what came before: `gate` on a first try, else the previous try's error */
  waits?: Record<string, number>;
}

export type ToContender = { type: 'run'; id: number; calls: number; concurrency: number; perCall: boolean } | { type: 'exit' };
export type FromContender =
  | { type: 'ready' }
  | { type: 'result'; id: number; wallMs: number; cpuMs: number; startedAt: number; calls: CallResult[]; returned: number }
  | { type: 'failed'; id: number; message: string };

const schema = z.object({ queue: z.enum(['billing', 'tech', 'sales']) });
const prompt = (call: number) => `Sort: call ${call}`;
const epochNow = () => performance.timeOrigin + performance.now();
const short = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).slice(0, 160);

type OneCall = (call: number) => Promise<Omit<CallResult, 'call' | 'doneAt'>>;

async function aiCall(kind: 'ai-generateObject' | 'ai-generateText', baseUrl: string): Promise<OneCall> {
  const { generateObject, generateText, NoObjectGeneratedError, Output } = await import('ai');
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  // supportsStructuredOutputs: the endpoint takes json_schema, as OpenAI and OpenRouter do
  const provider = createOpenAICompatible({ name: 'fake', baseURL: baseUrl, apiKey: 'bench-key', supportsStructuredOutputs: true });
  const model = provider(MODEL);
  const tokens = (u: { inputTokens?: number; outputTokens?: number } | undefined) => (u?.inputTokens ?? 0) + (u?.outputTokens ?? 0);
  const fromError = (e: unknown) => ({ returned: false, visibleTokens: NoObjectGeneratedError.isInstance(e) ? tokens(e.usage) : 0, error: short(e) });
  if (kind === 'ai-generateObject') {
    return async (call) => {
      try {
        const r = await generateObject({ model, schema, prompt: prompt(call), maxRetries: 2 });
        return { returned: true, queue: r.object.queue, visibleTokens: tokens(r.usage) };
      } catch (e) {
        return fromError(e);
      }
    };
  }
  return async (call) => {
    try {
      const r = await generateText({ model, output: Output.object({ schema }), prompt: prompt(call), maxRetries: 2 });
      const out = r.output; // throws when the text does not parse or validate
      return { returned: true, queue: out.queue, visibleTokens: tokens(r.totalUsage) };
    } catch (e) {
      return fromError(e);
    }
  };
}

async function openaiCall(baseUrl: string): Promise<OneCall> {
  const { default: OpenAI } = await import('openai');
  const { zodResponseFormat } = await import('openai/helpers/zod');
  const client = new OpenAI({ baseURL: baseUrl, apiKey: 'bench-key', maxRetries: 2 });
  const format = zodResponseFormat(schema, 'ticket');
  return async (call) => {
    try {
      const r = await client.chat.completions.parse({ model: MODEL, messages: [{ role: 'user', content: prompt(call) }], response_format: format });
      const parsed = r.choices[0]?.message.parsed;
      const visibleTokens = r.usage?.total_tokens ?? 0;
      // parse() answers a refusal with parsed null: the caller gets no object
      if (!parsed) return { returned: false, visibleTokens, error: r.choices[0]?.message.refusal ? 'refusal' : 'no parsed output' };
      return { returned: true, queue: parsed.queue, visibleTokens };
    } catch (e) {
      return { returned: false, visibleTokens: 0, error: short(e) };
    }
  };
}

/** The floor: a bare fetch of the same request, the JSON read and parsed. */
function fetchCall(baseUrl: string): OneCall {
  const body = (call: number) =>
    JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: prompt(call) }],
      response_format: { type: 'json_schema', json_schema: { name: 'ticket', strict: true, schema: z.toJSONSchema(schema) } },
    });
  return async (call) => {
    const res = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' },
      body: body(call),
    });
    const j = (await res.json()) as { choices: { message: { content: string } }[]; usage?: { total_tokens?: number } };
    const out = JSON.parse(j.choices[0]!.message.content) as { queue: string };
    return { returned: true, queue: out.queue, visibleTokens: j.usage?.total_tokens ?? 0 };
  };
}

/**
 * W1's floor: the least a client can do under AQVEN's rate-limit rule — a bare `node:http` client
 * (keep-alive) whose every call waits out the model's pause, one call probes after it, and the
 * others go at once when the probe is not rate-limited, at most `cap` in flight (AQVEN's default
 * max_concurrency). No parsing beyond the JSON, no validation, nothing recorded.
 */
export function ruleFloorCall(baseUrl: string, cap: number): OneCall {
  const agent = new Agent({ keepAlive: true });
  const url = new URL(`${baseUrl}/chat/completions`);
  const body = (call: number) => JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: prompt(call) }] });
  const post = (call: number) =>
    new Promise<{ status: number; retryAfterMs: number; text: string }>((resolve, reject) => {
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()) ?? 0, text }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body(call));
    });
  let pausedUntil = 0;
  let pauseBegan = 0;
  let probeNeeded = false;
  let probe: Promise<void> | null = null;
  let probeOver = () => {};
  let active = 0;
  const slots: (() => void)[] = [];
  /** hands the slot to the next call queued for one, else frees it */
  const free = () => {
    const next = slots.shift();
    if (next) next();
    else active--;
  };
  return async (call) => {
    for (;;) {
      let probing = false;
      for (;;) {
        const left = pausedUntil - Date.now();
        if (left > 0) await new Promise((r) => setTimeout(r, left));
        else if (probe) await probe;
        else {
          // a slot, then the pause looked at again: it may have begun while this call queued
          if (active < cap) active++;
          else await new Promise<void>((r) => slots.push(r));
          if (pausedUntil > Date.now() || probe) {
            free();
            continue;
          }
          if (probeNeeded) {
            probing = true;
            probe = new Promise((r) => (probeOver = r));
          }
          break;
        }
      }
      const sentAt = Date.now();
      let r: Awaited<ReturnType<typeof post>>;
      try {
        r = await post(call);
      } catch (e) {
        free();
        if (probing) {
          probe = null;
          probeOver();
        }
        throw e;
      }
      // as AQVEN's gate: a 429 to a request sent before the pause in force began is that limit told again
      if (r.status === 429 && !(sentAt <= pauseBegan && Date.now() < pausedUntil)) {
        pausedUntil = Math.max(pausedUntil, Date.now() + r.retryAfterMs);
        pauseBegan = Date.now();
      }
      probeNeeded ||= r.status === 429;
      // the pause is in force before the slot is handed on, as in AQVEN's gate
      free();
      if (probing) {
        if (r.status !== 429) probeNeeded = false;
        probe = null;
        probeOver();
      }
      if (r.status !== 200) continue;
      const j = JSON.parse(r.text) as { choices: { message: { content: string } }[]; usage?: { total_tokens?: number } };
      return { returned: true, queue: (JSON.parse(j.choices[0]!.message.content) as { queue: string }).queue, visibleTokens: j.usage?.total_tokens ?? 0 };
    }
  };
}

/** The AQVEN project the contender runs: one agent (output.retries: 2, default policies), one flow of one node. */
export function aqvenProjectFiles(): Record<string, string> {
  return oneNodeProject('peers', { model: MODEL, retries: 2 });
}

/** `db`'s run store becomes bench/writer-thread-store.ts's: only in the contender bundle, whose run store has the seam (bundle.ts) */
async function seedWriterThread(db: SqliteDb): Promise<{ close(): Promise<void> }> {
  const mod = (await import('@/db/run-store')) as { seedRunStore?: (db: SqliteDb, store: RunStore) => void };
  if (!mod.seedRunStore) throw new Error('aqven-writer-thread runs only from the contender bundle (bench/peers/bundle.ts)');
  const { workerStore } = await import('../writer-thread-store');
  const w = await workerStore(db, false);
  mod.seedRunStore(db, w.store);
  return w;
}

async function aqvenCall(
  baseUrl: string,
  record: boolean,
  writerThread = false,
): Promise<{ one: OneCall; visible?: (calls: CallResult[]) => Promise<void>; close: () => Promise<void> }> {
  const { loadProject } = await import('@/lib/project');
  const { runFlow } = await import('@/lib/flow/run-flow');
  const { openDb, closeDb } = await import('@/db/client');
  const { getRunRecord } = await import('@/lib/flow/stored-run');
  const dir = mkdtempSync(join(tmpdir(), 'aqven-peers-'));
  for (const [f, text] of Object.entries(aqvenProjectFiles())) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const { project, diagnostics } = await loadProject(dir, { env: {} });
  if (!project) throw new Error(`peers project invalid: ${JSON.stringify(diagnostics)}`);
  const providers = { ...project.providers, openrouter: { ...project.providers.openrouter!, baseUrl } };
  const env = { [project.providers.openrouter!.apiKeyEnv ?? 'OPENROUTER_API_KEY']: 'bench-key' };
  const db = record ? openDb(project.databasePath) : null;
  // the SQLite writer on a worker thread (bench/writer-thread-store.ts), seeded into the bundle's run store (bundle.ts)
  const writer = db && writerThread ? await seedWriterThread(db) : null;
  const runIds = new Map<number, string>();
  const one: OneCall = async (call) => {
    const r = await runFlow({ project, flow: 'one', input: { ticket: `call ${call}` }, providers, env, db });
    runIds.set(call, r.id);
    const tokens = r.usage.inputTokens + r.usage.outputTokens;
    const node = r.nodes[0];
    if (r.status !== 'succeeded' || node?.status !== 'succeeded') return { returned: false, visibleTokens: tokens, error: node?.error?.code ?? r.status };
    return { returned: true, queue: (node.output as { queue: string }).queue, visibleTokens: tokens };
  };
  // recorded: the tokens the run record in the database shows, every attempt's usage summed
  const visible = db
    ? async (calls: CallResult[]) => {
        // the answers cut off mid-body were billed: their usage is looked up from the fake first (it answers at once)
        const { lookUpUntilDone } = await import('@/lib/flow/usage-lookup');
        await lookUpUntilDone(db, { providers, env, deadline: Date.now() + 30_000 });
        for (const c of calls) {
          const stored = await getRunRecord(db, runIds.get(c.call)!);
          const attempts = (stored?.nodes ?? []).flatMap((n) => n.attempts);
          c.visibleTokens = attempts.reduce((s, a) => s + a.usage.inputTokens + a.usage.outputTokens, 0);
          c.usageUnknownAttempts = attempts.filter((a) => a.usageUnknown).length;
          c.waits = {};
          for (const a of attempts) {
            a.transport.forEach((t, i) => {
              const why = i === 0 ? 'gate' : `after ${a.transport[i - 1]!.error ?? a.transport[i - 1]!.status}`;
              c.waits![why] = (c.waits![why] ?? 0) + t.waitedMs;
            });
          }
        }
      }
    : undefined;
  // the project and its database go with the process
  const close = async () => {
    if (db) await closeDb(project.databasePath);
    await writer?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { one, visible, close };
}

async function main() {
  const [kind, baseUrl] = process.argv.slice(2) as [ContenderKind, string];
  if (!CONTENDERS.includes(kind) || !baseUrl) throw new Error(`usage: contender.ts ${CONTENDERS.join('|')} BASE_URL`);
  const send = (m: FromContender) => process.send!(m);
  let one: OneCall;
  let visible: ((calls: CallResult[]) => Promise<void>) | undefined;
  let close = async () => {};
  if (kind === 'ai-generateObject' || kind === 'ai-generateText') one = await aiCall(kind, baseUrl);
  else if (kind === 'openai-parse') one = await openaiCall(baseUrl);
  else if (kind === 'fetch') one = fetchCall(baseUrl);
  else if (kind === 'rule-floor') one = ruleFloorCall(baseUrl, PROVIDER_DEFAULTS.maxConcurrency);
  else ({ one, visible, close } = await aqvenCall(baseUrl, kind !== 'aqven', kind === 'aqven-writer-thread'));

  process.on('message', async (m: ToContender) => {
    if (m.type === 'exit') {
      await close().catch((e: unknown) => console.error(`contender ${kind}: cleaning up failed: ${short(e)}`));
      return process.disconnect();
    }
    try {
      const results: CallResult[] = [];
      let next = 1;
      let returned = 0;
      const c0 = process.cpuUsage();
      const startedAt = epochNow();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: Math.min(m.concurrency, m.calls) }, async () => {
          while (next <= m.calls) {
            const call = next++;
            const r = await one(call);
            if (r.returned) returned++;
            if (m.perCall) results.push({ call, doneAt: epochNow(), ...r });
          }
        }),
      );
      const wallMs = performance.now() - t0;
      const c = process.cpuUsage(c0);
      if (visible && m.perCall) await visible(results);
      send({ type: 'result', id: m.id, wallMs, cpuMs: (c.user + c.system) / 1000, startedAt, calls: results, returned });
    } catch (e) {
      send({ type: 'failed', id: m.id, message: short(e) });
    }
  });
  send({ type: 'ready' });
}

// only as a forked contender (a test's worker process has an IPC channel too)
if (process.send && /contender\.(ts|mjs)$/.test(process.argv[1] ?? '')) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(2);
  });
}
