// The one entry point of the engine (DESIGN.md §4): runs one node to completion — build the
// request, pass the rate-limit gate, transport, classify the outcome before any parsing, validate
// only an `ok` answer, then follow the policy — and emits a fact per attempt and per try.
import { parseModelString } from '@/lib/project/model-string';
import type { ProviderAdapter } from '@/lib/providers/adapter';
import { anthropicAdapter } from '@/lib/providers/anthropic';
import { geminiAdapter } from '@/lib/providers/gemini';
import { openaiAdapter } from '@/lib/providers/openai';
import { redact, redactMessages, redactText } from '@/lib/redact';
import { systemClock } from './clock';
import { initialMessages, repairMessage } from './messages';
import { answerLimit, beginAttempt, computeBudget, decide, INITIAL_STATE, OUTCOME_FIELD, type Decision, type Verdict } from './policy';
import { defaultRateGate, type RateGate } from './rate-gate';
import { runTransport } from './transport';
import type {
  AttemptErrorKind,
  AttemptRecord,
  Clock,
  EngineEvent,
  Message,
  NodeCall,
  NodePolicy,
  NodeResult,
  Outcome,
  ResolvedProvider,
  SharedPauses,
  ValidationIssue,
  WireApi,
} from './types';
import { priceUsage, sumUsage } from './usage';
import { validateOutput } from './validate';

export interface RedactFullOptions {
  /** caller-supplied patterns, redacted on top of the five fixed detectors */
  extraPatterns?: RegExp[];
}

export interface CallNodeDeps {
  providers: Record<string, ResolvedProvider>;
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
   * Off by default (DESIGN §9): redacts the whole outgoing prompt and the incoming response. The
   * model never sees the redacted parts; streamed text is then delivered once, redacted, when
   * each try's stream has ended (a pattern may span chunks).
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

const ADAPTERS: Record<WireApi, ProviderAdapter> = { openai: openaiAdapter, anthropic: anthropicAdapter, gemini: geminiAdapter };

export function adapterFor(api: WireApi): ProviderAdapter {
  return ADAPTERS[api];
}

interface Link {
  model: string;
  modelId: string;
  provider: ResolvedProvider;
  adapter: ProviderAdapter;
}

function resolveChain(chain: string[], providers: Record<string, ResolvedProvider>): Link[] {
  if (chain.length === 0) throw new EngineConfigError('the node has no model', 'E_MODEL');
  return chain.map((model) => {
    const ref = parseModelString(model);
    if (!ref) throw new EngineConfigError(`model "${model}" is not "provider:model-id"`, 'E_MODEL');
    const provider = Object.hasOwn(providers, ref.provider) ? providers[ref.provider] : undefined;
    if (!provider) throw new EngineConfigError(`model "${model}" names provider "${ref.provider}", which is not configured`, 'E_PROVIDER');
    return { model, modelId: ref.modelId, provider, adapter: adapterFor(provider.api) };
  });
}

/** No API key in anything we store or show (DESIGN §9), whatever a provider echoes back. */
function scrubKey(text: string, key: string | undefined): string {
  return key && key.length >= 4 && text.includes(key) ? text.split(key).join('<API_KEY>') : text;
}

function summarise(issues: ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((i) => `${i.pointer || '(root)'} ${i.message}`);
  return shown.join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : '');
}

function failMessage(d: Extract<Decision, { kind: 'fail' }>, a: AttemptRecord, policy: NodePolicy, outcome: Outcome): string {
  const what = a.error?.message ?? `${a.model} answered with outcome ${outcome}`;
  switch (d.reason) {
    case 'policy':
      return `${what}; output.${OUTCOME_FIELD[outcome as Exclude<Outcome, 'ok'>]} is "fail"`;
    case 'budget':
      return `${what}; ${a.model} has given all ${answerLimit(policy)} answers allowed (output.retries: ${policy.retries})`;
    case 'no_model_left':
      return `${what}; no model is left in fallback_models`;
    case 'not_resendable':
      return what;
  }
}

export async function callNode(call: NodeCall, deps: CallNodeDeps): Promise<NodeResult> {
  const clock = deps.clock ?? systemClock;
  const fetchFn = deps.fetch ?? globalThis.fetch;
  const env = deps.env ?? process.env;
  const gate = deps.gate ?? defaultRateGate;
  const full = deps.redactFull;
  const emit = async (e: EngineEvent): Promise<void> => {
    if (deps.onEvent) await deps.onEvent(e);
  };
  const links = resolveChain(call.policy.chain, deps.providers);
  const stream = call.stream === true;
  const schema = call.outputSchema;

  // `sent` is what the model sees; `recorded` is what we store: the same, except that a failed
  // answer quoted back in a repair is stored redacted, like everywhere else it is captured.
  const original: Message[] = full ? redactMessages(initialMessages(call), full) : initialMessages(call);
  let sent = original;
  let recorded = original;
  let state = INITIAL_STATE;
  const attempts: AttemptRecord[] = [];

  for (;;) {
    if (deps.signal?.aborted) throw deps.signal.reason;
    state = beginAttempt(state);
    const link = links[state.chainIndex]!;
    const seq = attempts.length + 1;
    const startedAt = clock.now();
    await emit({
      type: 'attempt_start',
      nodeId: call.nodeId,
      seq,
      model: link.model,
      chainIndex: state.chainIndex,
      answerNo: state.answers,
      request: recorded,
      startedAt,
    });

    // read at call time, never stored
    const apiKey = link.provider.apiKeyEnv ? env[link.provider.apiKeyEnv] : undefined;
    const scrub = (text: string): string => scrubKey(full ? redactText(text, full) : redact(text), apiKey);
    const wire = link.adapter.buildRequest(
      { modelId: link.modelId, messages: sent, settings: call.settings, responseSchema: call.policy.strict ? schema : undefined, stream },
      link.provider,
      apiKey,
    );
    const tr = await runTransport(
      { model: link.model, provider: link.provider, adapter: link.adapter, wire, stream },
      {
        fetch: fetchFn,
        clock,
        gate,
        sharedPauses: deps.sharedPauses,
        signal: deps.signal,
        scrub,
        onTry: (t) => emit({ type: 'try_end', nodeId: call.nodeId, seq, try: t }),
        onDelta: full ? undefined : (tryNo, text) => emit({ type: 'delta', nodeId: call.nodeId, seq, tryNo, text }),
        onPause: emit,
      },
    );

    // Step 4: the outcome comes from the adapter's classification; only now may `ok` be parsed.
    let outcome: Outcome = 'error';
    let finishReason: string | null = null;
    let nativeFinishReason: string | null = null;
    let text: string | null = null;
    let error: { kind: AttemptErrorKind; message: string; detail: string | null } | null = null;
    let issues: ValidationIssue[] = [];
    let value: unknown = null;
    let verdict: Verdict;

    if (!tr.ok) {
      const what = tr.kind === 'client_error' ? 'rejected the request' : 'could not be reached';
      error = { kind: tr.kind, message: `${link.model} ${what}: ${tr.message}`, detail: tr.detail };
      verdict = { outcome: 'error', resendable: tr.kind !== 'client_error' };
    } else {
      const r = tr.response;
      outcome = r.outcome;
      finishReason = r.finishReason;
      nativeFinishReason = r.nativeFinishReason;
      text = full ? redactText(r.text, full) : r.text;
      if (full && stream && text) await emit({ type: 'delta', nodeId: call.nodeId, seq, tryNo: tr.tries.length, text });
      const fr = finishReason ?? 'none';
      switch (outcome) {
        case 'ok':
          if (schema) {
            const v = validateOutput(schema, text);
            if (v.valid) value = v.value;
            else {
              issues = v.issues;
              error = {
                kind: 'invalid_output',
                message: `${link.model}'s answer does not match the node's output schema: ${summarise(issues)}`,
                detail: scrub(text),
              };
            }
          } else value = text;
          verdict = { outcome: 'ok', valid: issues.length === 0 };
          break;
        case 'error': {
          const raw = [text, r.error?.detail].filter(Boolean).join('\n\n');
          error = {
            kind: 'provider_error',
            message: `${link.model} ended the response with an error (finish reason ${fr}): ${scrub(r.error?.message ?? 'no details')}`,
            detail: raw ? scrub(raw) : null,
          };
          verdict = { outcome, resendable: true };
          break;
        }
        case 'refusal': {
          const raw = r.refusal ?? text;
          error = { kind: 'refusal', message: `${link.model} refused to answer (finish reason ${fr})`, detail: raw ? scrub(raw) : null };
          verdict = { outcome, resendable: true };
          break;
        }
        case 'truncated':
          // never parsed, never validated, never repaired (DESIGN §5)
          error = { kind: 'truncated', message: `${link.model}'s answer was cut off (finish reason ${fr})`, detail: text ? scrub(text) : null };
          verdict = { outcome, resendable: true };
          break;
      }
    }

    const decision = decide(call.policy, call.agentFile, state, verdict);
    const discarded = decision.kind !== 'succeed';
    const rawStreamed = stream ? tr.streamedText : null;
    const price = link.provider.models[link.modelId];
    const record: AttemptRecord = {
      seq,
      model: link.model,
      chainIndex: state.chainIndex,
      answerNo: state.answers,
      outcome,
      finishReason,
      cause: decision.cause,
      action: decision.action,
      request: recorded,
      // the raw answer of a failed attempt is captured redacted, like its error detail
      responseText: outcome === 'ok' && text !== null ? (discarded ? scrub(text) : text) : null,
      error,
      validationErrors: issues,
      discarded,
      streamedText: rawStreamed === null ? null : discarded ? scrub(rawStreamed) : full ? text : rawStreamed,
      usage: sumUsage(tr.usage.map((u) => priceUsage(u, price))),
      startedAt,
      finishedAt: clock.now(),
      tries: tr.tries,
    };
    if (nativeFinishReason !== null) record.nativeFinishReason = nativeFinishReason;
    attempts.push(record);
    // the recorder commits the attempt before the engine acts on it (DESIGN §10)
    await emit({ type: 'attempt_end', nodeId: call.nodeId, attempt: record });

    switch (decision.kind) {
      case 'succeed':
        return finish('succeeded', value, null);
      case 'fail':
        return finish('failed', null, { code: decision.code, message: failMessage(decision, record, call.policy, outcome), hint: decision.hint });
      case 'retry':
        break; // the same request again; the dropped answer is not part of it
      case 'repair': {
        const ask: Message = { role: 'user', content: repairMessage(issues, call) };
        sent = [...sent, { role: 'assistant', content: text! }, ask];
        recorded = [...recorded, { role: 'assistant', content: scrub(text!) }, ask];
        break;
      }
      case 'fallback':
        sent = original;
        recorded = original;
        break;
    }
    state = decision.next;
  }

  function finish(status: NodeResult['status'], output: unknown, error: NodeResult['error']): NodeResult {
    return { status, output, error, usage: sumUsage(attempts.map((a) => a.usage)), attempts, budget: computeBudget(call.policy, attempts) };
  }
}
