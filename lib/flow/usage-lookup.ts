// The usage of cut-off answers, looked up from the provider afterwards (DESIGN: Usage unknown,
// never zero). A 2xx reply not read to its end may have been billed; when the provider named the
// generation (OpenRouter's `x-generation-id`) the try keeps the id, pending, and a pass here asks
// `GET {base_url}/generation?id=` for what was billed: found → added to the try, attempt, node, run
// and daily sums once (db/usage-lookup-queries.ts); not ready yet (404), a 5xx or a network error
// → again later, each wait twice the last; refused (401/403) → given up at once, as after
// MAX_LOOKUPS lookups or MAX_LOOKUP_AGE_MS. A simulated run's lookups end with the command that ran
// it (lookUpRunNow): no later process asks about them; a simulator's generation left pending (a
// simulated dashboard stopped) is given up at once by a process whose provider is a real host.
// The key is sent, never stored, logged or printed.
import { applyFoundUsage, claimLookup, dueLookups, giveUpRunLookups, lookupGaveUp, lookUpLater, pendingLookups, type DueLookup } from '@/db/usage-lookup-queries';
import type { Db } from '@/db/types';
import { parseModelString } from '@/lib/engine/model-string';
import { providerHosts, refusedHost } from '@/lib/engine/provider-hosts';
import type { ResolvedProvider, UsageTotals } from '@/lib/engine/types';
import { priceUsage, roundCost, ZERO_USAGE } from '@/lib/engine/usage';
import { onBuiltInHost } from '@/lib/project/builtin-providers';
import { joinUrl } from '@/lib/providers/wire-helpers';
import { SIM_GENERATION_PREFIX } from '@/lib/sim/render-openai';
import { queryErrorText } from '@/db/pg';

/** lookups of one try at most; then its usage stays unknown */
export const MAX_LOOKUPS = 10;
/** no lookup once the try is this old */
export const MAX_LOOKUP_AGE_MS = 60 * 60_000;
/** the wait after the first lookup that found nothing; each next one waits twice as long, at most LOOKUP_DELAY_CAP_MS */
export const LOOKUP_DELAY_MS = 2_000;
export const LOOKUP_DELAY_CAP_MS = 10 * 60_000;
const TIMEOUT_MS = 10_000;

export interface LookUpOptions {
  /** the providers the attempts' model strings name (the session's: routed to the simulator when simulated) */
  providers: Record<string, ResolvedProvider>;
  /** where each provider's api_key_env is read */
  env: Readonly<Record<string, string | undefined>>;
  now?: () => number;
  fetch?: typeof fetch;
  /** lookups per pass (default 100) */
  limit?: number;
  /** lookups in flight at once (default 4) */
  concurrency?: number;
  /** one lookup's timeout, ms (default 10 s) */
  timeoutMs?: number;
  /** only this run's tries */
  runId?: string;
  /**
   * The providers are routed to the simulator (a simulated session, `--simulate`): only the
   * generations a simulator made are asked about — one made by another simulator, or by this one
   * before a reset, it refuses (400: given up at once, never matched by number) — and a real
   * provider's are left pending for a process that has the real providers.
   */
  simulated?: boolean;
}

export interface LookupPass {
  /** lookups this pass made (claimed, then asked — or given up unasked: a simulator's id on a real provider's host) */
  looked: number;
  found: number;
  /** what was found, summed */
  usage: UsageTotals;
  gaveUp: number;
  /** still pending after the pass (of the run, with runId), and when the next is due */
  pending: number;
  nextAt: number | null;
  /** why lookups were given up or put off, one line each, deduplicated (never the key) */
  notes: string[];
}

type Verdict = { kind: 'found'; usage: UsageTotals } | { kind: 'later'; why: string } | { kind: 'give_up'; why: string };

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** OpenRouter's stats of one generation, priced by the one rule the engine uses (its total_cost, else the catalogue). */
function readStats(body: unknown, price: ResolvedProvider['models'][string] | undefined): UsageTotals | null {
  const d = (body as { data?: Record<string, unknown> } | null)?.data;
  if (!d || typeof d !== 'object') return null;
  const input = isNum(d.native_tokens_prompt) ? d.native_tokens_prompt : d.tokens_prompt;
  const output = isNum(d.native_tokens_completion) ? d.native_tokens_completion : d.tokens_completion;
  if (!isNum(input) || !isNum(output)) return null;
  return priceUsage({ inputTokens: input, outputTokens: output, costUsd: isNum(d.total_cost) ? d.total_cost : null }, price);
}

async function askProvider(l: DueLookup, o: LookUpOptions): Promise<Verdict> {
  const ref = parseModelString(l.model);
  const provider = ref && Object.hasOwn(o.providers, ref.provider) ? o.providers[ref.provider] : undefined;
  if (!ref || !provider) return { kind: 'give_up', why: `${l.model}: its provider is not configured` };
  if (provider.api !== 'openai') return { kind: 'give_up', why: `${ref.provider}: no generation lookup for api ${provider.api}` };
  // a simulated dashboard's leftover: the real provider never made that generation, and no
  // simulator behind a built-in provider's own host can answer for it
  if (l.generationId.startsWith(SIM_GENERATION_PREFIX) && onBuiltInHost(provider.baseUrl)) {
    return { kind: 'give_up', why: `${ref.provider}: generation ${l.generationId} was made by AQVEN's simulator, not by ${new URL(provider.baseUrl).host}` };
  }
  // the deployment's AQVEN_PROVIDER_HOSTS holds for this request as for the model calls (one-try.ts)
  const refused = refusedHost(providerHosts(), provider.baseUrl);
  if (refused !== null) return { kind: 'give_up', why: `${ref.provider}: its host ${refused} is not in AQVEN_PROVIDER_HOSTS: not asked` };
  const key = provider.apiKeyEnv && Object.hasOwn(o.env, provider.apiKeyEnv) ? o.env[provider.apiKeyEnv] : undefined;
  const url = `${joinUrl(provider.baseUrl, 'generation')}?id=${encodeURIComponent(l.generationId)}`;
  let res: Response;
  try {
    res = await (o.fetch ?? fetch)(url, {
      headers: { accept: 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      signal: AbortSignal.timeout(o.timeoutMs ?? TIMEOUT_MS),
      redirect: 'manual', // the key goes to the provider's host only
    });
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    return { kind: 'later', why: `${ref.provider}: ${name === 'TimeoutError' ? 'the lookup timed out' : 'the lookup could not connect'}` };
  }
  const text = await res.text().catch(() => '');
  if (res.status === 200) {
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // said below
    }
    const usage = readStats(body, provider.models[ref.modelId]);
    return usage ? { kind: 'found', usage } : { kind: 'later', why: `${ref.provider}: the generation stats had no token counts` };
  }
  if (res.status === 401 || res.status === 403) {
    return { kind: 'give_up', why: `${ref.provider}: HTTP ${res.status}, the key${provider.apiKeyEnv ? ` in ${provider.apiKeyEnv}` : ''} was refused for generation stats` };
  }
  if (res.status === 404) return { kind: 'later', why: `${ref.provider}: the stats are not ready yet (HTTP 404)` };
  if (res.status === 429 || res.status >= 500) return { kind: 'later', why: `${ref.provider}: HTTP ${res.status}` };
  return { kind: 'give_up', why: `${ref.provider}: HTTP ${res.status} to the generation lookup` };
}

/** The wait before the next lookup, after `n` lookups found nothing. */
export function lookupDelayMs(n: number): number {
  return Math.min(LOOKUP_DELAY_CAP_MS, LOOKUP_DELAY_MS * 2 ** Math.max(0, n - 1));
}

/** One pass: every lookup due now (at most `limit`), a few at a time. */
export async function lookUpUsage(db: Db, o: LookUpOptions): Promise<LookupPass> {
  const now = o.now ?? Date.now;
  const pass: LookupPass = { looked: 0, found: 0, usage: { ...ZERO_USAGE }, gaveUp: 0, pending: 0, nextAt: null, notes: [] };
  const note = (why: string) => {
    if (!pass.notes.includes(why)) pass.notes.push(why);
  };
  const due = await dueLookups(db, { now: now(), limit: o.limit ?? 100, runId: o.runId, ...(o.simulated && { idPrefix: SIM_GENERATION_PREFIX }) });
  const one = async (l: DueLookup) => {
    const at = now();
    if (!(await claimLookup(db, l, { now: at, holdUntil: at + (o.timeoutMs ?? TIMEOUT_MS) + 5_000 }))) return; // another process has it
    pass.looked++;
    const v = await askProvider(l, o);
    const count = l.lookupCount + 1;
    if (v.kind === 'found') {
      if (await applyFoundUsage(db, l, v.usage)) {
        pass.found++;
        pass.usage = {
          inputTokens: pass.usage.inputTokens + v.usage.inputTokens,
          outputTokens: pass.usage.outputTokens + v.usage.outputTokens,
          costUsd: roundCost(pass.usage.costUsd + v.usage.costUsd),
        };
      }
      return;
    }
    const end = now();
    if (v.kind === 'give_up' || count >= MAX_LOOKUPS || end - l.finishedAt >= MAX_LOOKUP_AGE_MS) {
      note(v.kind === 'give_up' ? v.why : `${v.why}; gave up after ${count} lookup${count === 1 ? '' : 's'}`);
      pass.gaveUp++;
      await lookupGaveUp(db, l);
      return;
    }
    note(v.why);
    await lookUpLater(db, l, end + lookupDelayMs(count));
  };
  const queue = [...due];
  const workers = Array.from({ length: Math.min(o.concurrency ?? 4, queue.length) }, async () => {
    for (let l = queue.shift(); l; l = queue.shift()) await one(l);
  });
  await Promise.all(workers);
  const left = await pendingLookups(db, o.runId === undefined ? undefined : [o.runId]);
  pass.pending = left.pending;
  pass.nextAt = left.nextAt;
  return pass;
}

/**
 * The one pass a command makes for the run it just ran, before it exits (`aqven run`, `aqven
 * limits`, `aqven replay`: lib/cli/cut-off-lookup.ts). With `simulated` providers, what the pass did
 * not find is given up then: the simulator that minted those generations is this command's (or
 * asked by it), and any later pass would ask one that never made them — another simulator (which
 * refuses them: each tags its ids) — or, without --simulate, the real provider.
 */
export async function lookUpRunNow(db: Db, o: LookUpOptions & { runId: string }): Promise<LookupPass> {
  const pass = await lookUpUsage(db, o);
  if (!o.simulated || pass.pending === 0) return pass;
  const gone = await giveUpRunLookups(db, o.runId);
  pass.notes.push(`${gone} lookup${gone === 1 ? '' : 's'} of a simulated run given up: no later process can ask the simulator that answered`);
  return { ...pass, gaveUp: pass.gaveUp + gone, pending: 0, nextAt: null };
}

/**
 * Passes until nothing is pending (or nothing more can be done before `deadline`): each waits for
 * the next lookup due. `sleep` is injected (tests).
 */
export async function lookUpUntilDone(db: Db, o: LookUpOptions & { deadline: number; sleep?: (ms: number) => Promise<void> }): Promise<LookupPass> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const total: LookupPass = { looked: 0, found: 0, usage: { ...ZERO_USAGE }, gaveUp: 0, pending: 0, nextAt: null, notes: [] };
  for (;;) {
    const p = await lookUpUsage(db, o);
    total.looked += p.looked;
    total.found += p.found;
    total.gaveUp += p.gaveUp;
    total.usage = {
      inputTokens: total.usage.inputTokens + p.usage.inputTokens,
      outputTokens: total.usage.outputTokens + p.usage.outputTokens,
      costUsd: roundCost(total.usage.costUsd + p.usage.costUsd),
    };
    for (const n of p.notes) if (!total.notes.includes(n)) total.notes.push(n);
    total.pending = p.pending;
    total.nextAt = p.nextAt;
    if (p.pending === 0 || p.nextAt === null) return total;
    // a claim held by another process lapses later: wait for whichever comes first, at least a little
    const wait = Math.max(50, p.nextAt - now());
    if (now() + wait > o.deadline) return total;
    await sleep(wait);
  }
}

/**
 * Lookups in the background of a long-lived process (`aqven worker`, `aqven serve`): a pass every
 * `everyMs` on an unref'd timer, never two at once; a failing pass is logged once (until one
 * succeeds again) and never ends the process. `source` is read at each pass (a session may change).
 * Returns the stop.
 */
export function startUsageLookups(
  db: Db,
  source: () => Pick<LookUpOptions, 'providers' | 'env' | 'simulated'>,
  o: { everyMs?: number; log?: (line: string) => void } = {},
): () => void {
  const log = o.log ?? ((line: string) => console.error(line));
  let busy = false;
  let told = false;
  let stopped = false;
  const tick = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      await lookUpUsage(db, { ...source(), limit: 50 });
      told = false;
    } catch (err) {
      if (!told) log(`aqven: looking up the usage of cut-off answers failed (tried again later): ${queryErrorText(err)}`);
      told = true;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), o.everyMs ?? 5_000);
  timer.unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** "usage found for 2 (96 tokens, $0.00012); 1 still pending, next lookup in 4 s" — the CLI's words for a pass. */
export function describeLookups(p: LookupPass, now: number): string {
  const total = p.found + p.gaveUp + p.pending;
  const parts: string[] = [];
  const tokens = p.usage.inputTokens + p.usage.outputTokens;
  if (p.found) parts.push(`usage found for ${p.found} (${tokens.toLocaleString('en-US')} tokens, $${formatUsd(p.usage.costUsd)})`);
  if (p.gaveUp) parts.push(`${p.gaveUp} given up (usage stays unknown)`);
  if (p.pending) {
    const inS = p.nextAt === null ? null : Math.max(0, Math.ceil((p.nextAt - now) / 1000));
    parts.push(`${p.pending} still pending${inS === null ? '' : inS === 0 ? ', next lookup due now' : `, next lookup in ${inS} s`}`);
  }
  if (!total) return 'no cut-off answers waiting for a usage lookup';
  return `${total} cut-off answer${total === 1 ? '' : 's'}: ${parts.join('; ')}`;
}

function formatUsd(usd: number): string {
  if (usd === 0) return '0';
  // enough digits to show a fraction of a cent
  return usd >= 0.01 ? usd.toFixed(4).replace(/0+$/, '').replace(/\.$/, '') : usd.toPrecision(2);
}
