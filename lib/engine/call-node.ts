// The one entry point of the engine (DESIGN: One model call, in order): runs one node to
// completion — build the request, pass the rate-limit gate, transport, classify the outcome before
// any parsing, validate only an `ok` answer, follow the policy, record the attempt — and emits a
// fact per attempt and per try. `callNode` reads in that order; each step is a named function.
import { explainHint } from '@/lib/shared/run-codes';
import { capFailureText, FAILURE_TEXT_MAX_CHARS, redactMessages, redactText } from '@/lib/redact';
import { attemptKeys, deltaRecorder, scrubberOf, type Scrub } from './attempt-scrub';
import type { AdapterResult, AdapterTable, ProviderAdapter } from './adapter';
import { systemClock } from './clock';
import { initialMessages, providerErrorMessage, repairMessage } from './messages';
import { parseModelString } from './model-string';
import { answerLimit, beginAttempt, computeBudget, decide, INITIAL_STATE, OUTCOME_FIELD, type Decision, type PolicyState, type Verdict } from './policy';
import { notSentFactsOf, priorAnswersOf, resumePoint } from './prior-answers';
import { defaultRateGate, type RateGate } from './rate-gate';
import { scrubSecret } from './secrets';
import { runTransport, TransportAborted, type TransportResult } from './transport';
import type {
  AttemptRecord,
  AttemptRefusal,
  Clock,
  EngineEvent,
  Message,
  ModelPrice,
  NodeCall,
  NodePolicy,
  NodeResult,
  Outcome,
  ResolvedProvider,
  SharedPauses,
  ValidationIssue,
} from './types';
import { costSourceOf, priceUsage, reasoningOf, sumUsage } from './usage';
import { compileSchema, validateOutput } from './validate';

export interface RedactFullOptions {
  /** caller-supplied patterns, redacted on top of the five fixed detectors */
  extraPatterns?: RegExp[];
}

export interface CallNodeDeps {
  providers: Record<string, ResolvedProvider>;
  /** the wire adapter of each protocol, handed in: lib/providers exports `builtinAdapters` */
  adapters: AdapterTable;
  clock?: Clock;
  fetch?: typeof fetch;
  /** where API keys are read from at call time; default process.env */
  env?: Record<string, string | undefined>;
  gate?: RateGate;
  sharedPauses?: SharedPauses;
  /** awaited for every event before the engine goes on (the recorder commits first) */
  onEvent?: (e: EngineEvent) => void | Promise<void>;
  signal?: AbortSignal;
  /**
   * Asked before each attempt is sent; a refusal ends the node failed with it, nothing sent (the
   * caller's spend budget: DESIGN: The dashboard, "Spend budgets"). The engine knows no budget.
   */
  admit?: () => Promise<AttemptRefusal | null>;
  /**
   * Off by default (DESIGN: Redaction): redacts the whole outgoing prompt and the incoming
   * response. The model never sees the redacted parts; streamed text is then delivered once,
   * redacted, when each try's stream has ended (a pattern may span chunks).
   */
  redactFull?: RedactFullOptions;
}

/** A chain that names no configured provider: `aqven check` catches it; the engine refuses it. */
export class EngineConfigError extends Error {
  constructor(
    message: string,
    readonly code: 'E_MODEL' | 'E_PROVIDER',
  ) {
    super(message);
    this.name = 'EngineConfigError';
  }
}

/** One model of the node's chain, resolved to its provider and wire adapter. */
interface Link {
  model: string;
  modelId: string;
  provider: ResolvedProvider;
  adapter: ProviderAdapter;
}

function resolveChain(chain: string[], providers: Record<string, ResolvedProvider>, adapters: AdapterTable): Link[] {
  if (chain.length === 0) throw new EngineConfigError('the node has no model', 'E_MODEL');
  return chain.map((model) => {
    const ref = parseModelString(model);
    if (!ref) throw new EngineConfigError(`model "${model}" is not "provider:model-id"`, 'E_MODEL');
    const provider = Object.hasOwn(providers, ref.provider) ? providers[ref.provider] : undefined;
    if (!provider) throw new EngineConfigError(`model "${model}" names provider "${ref.provider}", which is not configured`, 'E_PROVIDER');
    const adapter = Object.hasOwn(adapters, provider.api) ? adapters[provider.api] : undefined;
    if (!adapter) throw new EngineConfigError(`provider "${ref.provider}" speaks api "${provider.api}", for which no adapter was given`, 'E_PROVIDER');
    return { model, modelId: ref.modelId, provider, adapter };
  });
}

/** output.strict: true passes `aqven check` for this model (E_STRICT): its provider and catalogue entry allow it. */
function strictPossible(l: Link): boolean {
  return l.provider.structuredOutputs && (Object.hasOwn(l.provider.models, l.modelId) ? l.provider.models[l.modelId]!.structuredOutputs : undefined) !== false;
}

// a streamed try is redacted for storage in batches: attempt-scrub.ts
export { STREAM_SCAN_CHARS, STREAM_SCAN_MS } from './attempt-scrub';

/** What an attempt came to, before the policy: the outcome, its error, and an ok answer's value. */
interface Judged {
  outcome: Outcome;
  finishReason: string | null;
  nativeFinishReason: string | null;
  /** an ok answer whose finish reason decided nothing (AdapterResult.note) */
  note: string | null;
  /** the answer's text as kept (under full redaction, redacted); null when nothing came back */
  text: string | null;
  error: AttemptRecord['error'];
  /** the validation issues as Ajv gave them: what a repair sends back to the model */
  issues: ValidationIssue[];
  /** the same issues as stored: redacted and bounded (storedIssues) */
  storedIssues: ValidationIssue[];
  /** the node's output: the validated value, or the text of a node without a schema */
  value: unknown;
  verdict: Verdict;
}

/** What a failure without a reply leaves of one: no finish reason, no text, nothing to validate. */
const noReply = () => ({ finishReason: null, nativeFinishReason: null, note: null, text: null, issues: [], storedIssues: [], value: null });

/**
 * Step 3 failed: no reply to classify. A client error is not resent by `on_error: retry`; a call
 * the rate-limit gate refused to send is no answer and never resent to the same model.
 */
function judgeTransportFailure(tr: Extract<TransportResult, { ok: false }>, model: string, providerName: string): Judged {
  // a 2xx whose body or stream broke off (or a stream that ended without a finish reason) was reached
  const reached = tr.status !== null && tr.status >= 200 && tr.status < 300;
  const redirected = tr.status !== null && tr.status >= 300 && tr.status < 400;
  // a status that came back is said as such: a 429 or a 500 was an answer, not a host out of reach
  const sent = tr.tries.filter((t) => t.status !== null).length;
  const answered = tr.status !== null && !reached && `answered ${tr.status}${sent > 1 ? ` after ${sent} tries` : ''}`;
  const what =
    tr.kind !== 'client_error'
      ? reached
        ? 'did not complete the response'
        : answered || 'could not be reached'
      : reached
        ? 'sent a response AQVEN does not accept'
        : redirected
          ? 'redirected the request'
          : tr.status === null
            ? 'was not sent the request'
            : 'rejected the request';
  const notSent = tr.notSent && { setting: tr.notSent.setting, now: tr.notSent.now, file: `providers/${providerName}.yaml` };
  if (tr.kind === 'refusal') {
    // the provider declined with an HTTP error (moderation, a content filter): a refusal, as on_refusal says
    const error = { kind: 'refusal' as const, message: `${model} refused to answer: ${tr.message}`, detail: tr.detail };
    return { outcome: 'refusal', ...noReply(), error, verdict: { outcome: 'refusal', resendable: true } };
  }
  if (tr.kind === 'quota') {
    // a spent quota: not resent to this model, whatever on_error says (DESIGN: Transport retry and rate limits)
    const error = { kind: 'quota' as const, message: `${model}'s quota is spent: ${tr.message}`, detail: tr.detail };
    return { outcome: 'error', ...noReply(), error, verdict: { outcome: 'error', resendable: false, quota: true } };
  }
  return {
    outcome: 'error',
    ...noReply(),
    error: notSent ? { kind: 'not_sent', message: tr.message, detail: tr.detail } : { kind: tr.kind, message: `${model} ${what}: ${tr.message}`, detail: tr.detail },
    verdict: notSent
      ? { outcome: 'error', resendable: false, notSent }
      : tr.waitTooLong
        ? { outcome: 'error', resendable: false, waitTooLong: { ...tr.waitTooLong, file: `providers/${providerName}.yaml` } }
        : { outcome: 'error', resendable: tr.kind !== 'client_error' },
  };
}

/**
 * Validation issues as stored (DESIGN: Redaction): Ajv's pointers and messages quote keys and
 * values the model wrote (`/scores/anna@example.com`, `must NOT have additional properties:
 * "DE89…"`), so they are failure text — scrubbed like the rest. The list is bounded too: issues are
 * kept while their text fits in FAILURE_TEXT_MAX_CHARS, then one more says how many were left out.
 */
function storedIssues(issues: ValidationIssue[], scrub: (t: string) => string): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  let size = 0;
  for (let k = 0; k < issues.length; k++) {
    const kept = { pointer: scrub(issues[k]!.pointer), message: scrub(issues[k]!.message) };
    size += kept.pointer.length + kept.message.length;
    if (k > 0 && size > FAILURE_TEXT_MAX_CHARS) {
      out.push({ pointer: '', message: `… [truncated: ${issues.length - k} more errors]` });
      break;
    }
    out.push(kept);
  }
  return out;
}

function summarise(issues: ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((i) => `${i.pointer || '(root)'} ${i.message}`);
  return shown.join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : '');
}

/**
 * Steps 4–5: the outcome is the adapter's classification; only an `ok` answer is parsed, and
 * validated when the node has an output schema. Captured failure text goes through `scrub`.
 */
function judgeReply(r: AdapterResult, text: string, model: string, schema: Record<string, unknown> | undefined, scrub: (t: string) => string): Judged {
  const base = { outcome: r.outcome, finishReason: r.finishReason, nativeFinishReason: r.nativeFinishReason, note: r.note, text, issues: [], storedIssues: [], value: null };
  const fr = r.finishReason ?? 'none';
  switch (r.outcome) {
    case 'ok': {
      if (!schema) return { ...base, error: null, value: text, verdict: { outcome: 'ok', valid: true } };
      const v = validateOutput(schema, text);
      if (v.valid) return { ...base, error: null, value: v.value, verdict: { outcome: 'ok', valid: true } };
      const stored = storedIssues(v.issues, scrub);
      return {
        ...base,
        error: { kind: 'invalid_output', message: `${model}'s answer does not match the node's output schema: ${summarise(stored)}`, detail: scrub(text) },
        issues: v.issues,
        storedIssues: stored,
        verdict: { outcome: 'ok', valid: false },
      };
    }
    case 'error': {
      const raw = [text, r.error?.detail].filter(Boolean).join('\n\n');
      // the provider's own error object comes as detail; without one the text is the adapter's, naming the finish reason
      const message = providerErrorMessage(model, r.finishReason, r.error?.message ? scrub(r.error.message) : null, r.error?.detail != null);
      return { ...base, error: { kind: 'provider_error', message, detail: raw ? scrub(raw) : null }, verdict: { outcome: 'error', resendable: true } };
    }
    case 'refusal': {
      const raw = r.refusal ?? text;
      const message = `${model} refused to answer (finish reason ${fr})`;
      return { ...base, error: { kind: 'refusal', message, detail: raw ? scrub(raw) : null }, verdict: { outcome: 'refusal', resendable: true } };
    }
    case 'truncated': {
      // never parsed, never validated, never repaired (DESIGN: Outcome classification)
      const message = `${model}'s answer was cut off (finish reason ${fr})`;
      return { ...base, error: { kind: 'truncated', message, detail: text ? scrub(text) : null }, verdict: { outcome: 'truncated', resendable: true } };
    }
  }
}

interface AttemptFacts {
  seq: number;
  link: Link;
  state: PolicyState;
  /** the request as stored */
  request: Message[];
  tr: TransportResult;
  judged: Judged;
  decision: Decision;
  stream: boolean;
  full: boolean;
  scrub: (t: string) => string;
  startedAt: number;
  finishedAt: number;
}

/** The model's catalogue price; its own entry: a model id "constructor" is not Object.prototype's. */
function priceOf(link: Link): ModelPrice | undefined {
  return Object.hasOwn(link.provider.models, link.modelId) ? link.provider.models[link.modelId] : undefined;
}

/** Step 7: the attempt as recorded. Whatever does not become the node's output is discarded, and
 * its captured text is stored redacted and capped (DESIGN: Redaction): `scrub`, and the message
 * (which quotes scrubbed text) capped again as a whole. */
function attemptRecord(f: AttemptFacts): AttemptRecord {
  const { judged: j, decision, scrub } = f;
  const discarded = decision.kind !== 'succeed';
  const rawStreamed = f.stream ? f.tr.streamedText : null;
  const price = priceOf(f.link);
  const record: AttemptRecord = {
    seq: f.seq,
    model: f.link.model,
    chainIndex: f.state.chainIndex,
    answerNo: f.state.answers,
    outcome: j.outcome,
    finishReason: j.finishReason,
    cause: decision.cause,
    action: decision.action,
    request: f.request,
    responseText: j.outcome === 'ok' && j.text !== null ? (discarded ? scrub(j.text) : j.text) : null,
    error: j.error && { ...j.error, message: capFailureText(j.error.message) },
    validationErrors: j.storedIssues,
    discarded,
    streamedText: rawStreamed === null ? null : discarded ? scrub(rawStreamed) : f.full ? j.text : rawStreamed,
    usage: sumUsage(f.tr.usage.map((u) => priceUsage(u, price))),
    ...(f.tr.usageUnknown && { usageUnknown: true }),
    costSource: costSourceOf(f.tr.usage, price),
    startedAt: f.startedAt,
    finishedAt: f.finishedAt,
    tries: f.tr.tries,
  };
  const reasoning = reasoningOf(f.tr.usage);
  if (reasoning !== undefined) record.reasoningTokens = reasoning;
  if (j.nativeFinishReason !== null) record.nativeFinishReason = j.nativeFinishReason;
  if (f.tr.ok && f.tr.response.responseModel) record.responseModel = f.tr.response.responseModel;
  if (f.tr.ok && f.tr.response.responseModel) record.responseModel = f.tr.response.responseModel;
  if (j.note !== null) record.finishNote = j.note;
  return record;
}

function failMessage(d: Extract<Decision, { kind: 'fail' }>, a: Pick<AttemptRecord, 'error' | 'model' | 'outcome'>, policy: NodePolicy): string {
  const what = a.error?.message ?? `${a.model} answered with outcome ${a.outcome}`;
  switch (d.reason) {
    case 'policy':
      return `${what}; output.${OUTCOME_FIELD[a.outcome as Exclude<Outcome, 'ok'>]} is "fail"`;
    case 'budget':
      return `${what}; ${a.model} has given all ${answerLimit(policy)} answers allowed (output.retries: ${policy.retries})`;
    case 'no_model_left':
      return `${what}; no model is left in fallback_models`;
    case 'not_sent':
      return `${what}; a model still paused is not asked again, and no fallback model takes the request`;
    case 'not_resendable':
      return what;
    case 'quota':
      return `${what}; a spent quota is not asked again, and no fallback model takes the request`;
    case 'wait_too_long':
      return `${what}; ${a.model} is not asked again before the wait it named, and no fallback model takes the request`;
  }
}

/** What every attempt of one node shares: the call, its dependencies and the attempts so far. */
interface NodeRun {
  call: NodeCall;
  deps: CallNodeDeps;
  clock: Clock;
  env: Record<string, string | undefined>;
  full: RedactFullOptions | undefined;
  emit: (e: EngineEvent) => Promise<void>;
  links: Link[];
  stream: boolean;
  strictAllowed: boolean;
  attempts: AttemptRecord[];
}

/** Steps 2–3: the rate-limit gate and the transport's tries. */
async function transportOf(r: NodeRun, link: Link, seq: number, sent: Message[], scrub: Scrub, keys: (string | undefined)[], apiKey: string | undefined) {
  const { call, deps, clock, emit, stream } = r;
  const wire = link.adapter.buildRequest(
    { modelId: link.modelId, messages: sent, settings: call.settings, responseSchema: call.policy.strict ? call.outputSchema : undefined, stream },
    link.provider,
    apiKey,
  );
  try {
    return await runTransport(
      { model: link.model, provider: link.provider, adapter: link.adapter, wire, stream },
      {
        fetch: deps.fetch,
        clock,
        gate: deps.gate ?? defaultRateGate,
        sharedPauses: deps.sharedPauses,
        signal: deps.signal,
        scrub,
        onSend: (tryNo, at) => emit({ type: 'try_start', nodeId: call.nodeId, seq, tryNo, at }),
        onGeneration: (tryNo, generationId) => void emit({ type: 'try_generation', nodeId: call.nodeId, seq, tryNo, generationId }),
        onTry: (t) => emit({ type: 'try_end', nodeId: call.nodeId, seq, try: t }),
        onDelta: r.full ? undefined : deltaRecorder({ clock: r.clock, emit: r.emit, nodeId: call.nodeId, seq, keys }),
        onPause: emit,
      },
    );
  } catch (err) {
    // the caller's signal cut the attempt off: what the provider reported of it goes to the
    // recorder, which closes the attempt as interrupted (DESIGN: Storage, "Stopping a run")
    if (!(err instanceof TransportAborted)) throw err;
    const usage = sumUsage(err.usage.map((u) => priceUsage(u, priceOf(link))));
    await emit({ type: 'attempt_interrupted', nodeId: call.nodeId, seq, usage, usageUnknown: err.usageUnknown });
    throw err.reason;
  }
}

/** Steps 2–7 of one attempt: send, classify, validate, decide, record. */
async function runAttempt(r: NodeRun, state: PolicyState, sent: Message[], recorded: Message[]) {
  const { call, clock, emit, full, stream } = r;
  const link = r.links[state.chainIndex]!;
  const seq = (call.prior?.lastSeq ?? 0) + r.attempts.length + 1;
  const startedAt = clock.now();
  await emit({ type: 'attempt_start', nodeId: call.nodeId, seq, model: link.model, chainIndex: state.chainIndex, answerNo: state.answers, request: recorded, startedAt });
  const { apiKey, keys } = attemptKeys(link, r.env);
  const scrub = scrubberOf(keys, full);
  const tr = await transportOf(r, link, seq, sent, scrub, keys, apiKey);

  // Steps 4–5: classify the outcome, then validate only an `ok` answer
  let judged: Judged;
  if (tr.ok) {
    // under full redaction the answer is redacted before anything reads it, and streamed once
    const text = full ? redactText(tr.response.text, full) : tr.response.text;
    if (full && stream && text) await emit({ type: 'delta', nodeId: call.nodeId, seq, tryNo: tr.tries.length, text, stored: scrubSecret(text, keys) });
    judged = judgeReply(tr.response, text, link.model, call.outputSchema, scrub);
  } else {
    judged = judgeTransportFailure(tr, link.model, link.provider.name);
  }

  // Step 6: the agent's policy
  const decision = decide(call.policy, call.agentFile, state, judged.verdict, { strictAllowed: r.strictAllowed });

  // Step 7: the recorder; an attempt the node goes on from is committed before the next request (DESIGN: Storage, "Durable points")
  const record = attemptRecord({ seq, link, state, request: recorded, tr, judged, decision, stream, full: !!full, scrub, startedAt, finishedAt: clock.now() });
  r.attempts.push(record);
  await emit({ type: 'attempt_end', nodeId: call.nodeId, attempt: record });
  return { judged, decision, record, scrub };
}

function finish(r: NodeRun, status: NodeResult['status'], output: unknown, error: NodeResult['error']): NodeResult {
  const { call, attempts } = r;
  // a restarted node's earlier answers count in its budget, by model
  const earlier = (call.prior?.attempts ?? []).map((a) => ({ chainIndex: call.policy.chain.indexOf(a.model), error: a.error })).filter((a) => a.chainIndex >= 0);
  // every failed node's hint ends with the command that prints its code's page
  const failure = error && { ...error, hint: explainHint(error.code, error.hint) };
  return { status, output, error: failure, usage: sumUsage(attempts.map((a) => a.usage)), attempts, budget: computeBudget(call.policy, [...earlier, ...attempts]) };
}

/** The end of a decision that ends the node: succeeded with its value, or failed with its words. */
function ended(r: NodeRun, decision: Extract<Decision, { kind: 'succeed' | 'fail' }>, last: Pick<AttemptRecord, 'error' | 'model' | 'outcome'>, value: unknown): NodeResult {
  if (decision.kind === 'succeed') return finish(r, 'succeeded', value, null);
  return finish(r, 'failed', null, { code: decision.code, message: capFailureText(failMessage(decision, last, r.call.policy)), hint: decision.hint });
}

export async function callNode(call: NodeCall, deps: CallNodeDeps): Promise<NodeResult> {
  const links = resolveChain(call.policy.chain, deps.providers, deps.adapters);
  const r: NodeRun = {
    call,
    deps,
    clock: deps.clock ?? systemClock,
    env: deps.env ?? process.env,
    full: deps.redactFull,
    emit: async (e) => {
      if (deps.onEvent) await deps.onEvent(e);
    },
    links,
    stream: call.stream === true,
    strictAllowed: links.every(strictPossible),
    attempts: [],
  };
  const { prior } = call;
  // the validator is made before the first request, not when the first answer is waiting on it
  // (the first compile in a process costs tens of milliseconds)
  if (call.outputSchema) compileSchema(call.outputSchema);

  // Step 1: the request. `sent` is what the model sees; `recorded` is what we store: the same,
  // except that a failed answer quoted back in a repair is stored redacted, like everywhere else.
  const original: Message[] = r.full ? redactMessages(initialMessages(call), r.full) : initialMessages(call);
  let sent = original;
  let recorded = original;
  let state = INITIAL_STATE;

  // a node restarted after its process died: its models' answers so far count (DESIGN: Storage, "Leases")
  if (prior) {
    const linkOf = (model: string) => links[call.policy.chain.indexOf(model)] ?? links[0]!;
    const point = resumePoint(prior, { ...call, facts: { strictAllowed: r.strictAllowed }, notSent: (a) => notSentFactsOf(a, linkOf(a.model).provider) });
    // the last stored answer of a restarted node ended it (its end was not stored): it ends so again, nothing sent
    if (point.kind === 'end') return ended(r, point.decision, point.last, point.value);
    state = point.state;
  }

  for (;;) {
    if (deps.signal?.aborted) throw deps.signal.reason;
    // nothing is sent once the caller may not spend more; the attempts before stay as recorded
    const refused = deps.admit ? await deps.admit() : null;
    if (refused) return finish(r, 'failed', null, { code: refused.code, message: refused.message, hint: refused.hint });
    state = beginAttempt(state);
    const { judged, decision, record, scrub } = await runAttempt(r, state, sent, recorded);
    switch (decision.kind) {
      case 'succeed':
      case 'fail':
        return ended(r, decision, record, judged.value);
      case 'retry':
        break; // the same request again; the dropped answer is not part of it
      case 'repair': {
        // the model gets its answer and Ajv's words as they are; the stored copy is failure text
        sent = [...sent, { role: 'assistant', content: judged.text! }, { role: 'user', content: repairMessage(judged.issues, call) }];
        recorded = [...recorded, { role: 'assistant', content: scrub(judged.text!) }, { role: 'user', content: repairMessage(judged.storedIssues, call) }];
        break;
      }
      case 'fallback':
        sent = original;
        recorded = original;
        break;
    }
    // the next model starts with the answers it gave before a restart, if any
    state = decision.kind === 'fallback' ? { ...decision.next, answers: priorAnswersOf(prior, call.policy.chain[decision.next.chainIndex]!) } : decision.next;
  }
}
