// What each span of a run says (DESIGN: Observability, "Traces"): the OpenTelemetry GenAI semantic
// conventions where they have a name for a fact (gen_ai.*, error.type, http.*), AQVEN's own facts as
// aqven.*. Tokens go on the attempt (`chat`) spans only, as gen_ai.usage.*: a backend that sums them
// over a trace counts each answer once; nodes and runs carry their sums as aqven.usage.*.
// No prompt or answer text is here unless content capture is on (contentAttributes), and then
// redacted; failure text is the engine's, redacted again before it leaves (failureText).
import type { Attributes } from '@opentelemetry/api';
import type { AttemptRecord, EngineEvent, Message, NodeResult, PauseOrigin, TryRecord } from '@/lib/engine/types';
import type { ObservedRun } from '@/lib/flow/run-observers';
import type { RunRecord } from '@/lib/flow/run-record';
import { redact } from '@/lib/redact';

/** the longest failure text a span carries (status message): the start of the message says what went wrong */
export const STATUS_MESSAGE_MAX = 1_024;

/** gen_ai.provider.name: the conventions' own value for a built-in provider, else the provider's name as the project has it */
const WELL_KNOWN_PROVIDERS: Readonly<Record<string, string>> = { openai: 'openai', anthropic: 'anthropic', google: 'gcp.gemini' };

/** `provider:model-id` (split at the first colon, DESIGN: Words) as the conventions name its parts */
export function modelParts(model: string): { provider: string; modelId: string } {
  const i = model.indexOf(':');
  const provider = i > 0 ? model.slice(0, i) : model;
  return { provider: Object.hasOwn(WELL_KNOWN_PROVIDERS, provider) ? WELL_KNOWN_PROVIDERS[provider]! : provider, modelId: i > 0 ? model.slice(i + 1) : model };
}

/** Failure text as it may leave: redacted (again: the engine's already is) and cut. */
export function failureText(text: string): string {
  const redacted = redact(text);
  return redacted.length > STATUS_MESSAGE_MAX ? `${redacted.slice(0, STATUS_MESSAGE_MAX)}…` : redacted;
}

/** The run span (`invoke_workflow {flow}`) as it starts. */
export function runStartAttributes(run: ObservedRun): Attributes {
  return {
    'gen_ai.operation.name': 'invoke_workflow',
    'gen_ai.workflow.name': run.flow,
    'aqven.run.id': run.runId,
    'aqven.flow': run.flow,
    'aqven.project': run.project,
    'aqven.run.kind': run.kind,
    'aqven.run.resumed': run.resumed,
  };
}

/** The run span's end: its status, sums and error code. */
export function runEndAttributes(record: RunRecord): Attributes {
  return {
    'aqven.run.status': record.status,
    'aqven.usage.input_tokens': record.usage.inputTokens,
    'aqven.usage.output_tokens': record.usage.outputTokens,
    'aqven.cost_usd': record.usage.costUsd,
    'aqven.usage_unknown': record.usageUnknown,
    ...(record.error && { 'error.type': record.error.code }),
  };
}

/** A node span (`invoke_agent {agent}`) as its turn starts it. */
export function nodeStartAttributes(runId: string, node: string, agent: string, turn: number): Attributes {
  return {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': agent,
    'aqven.run.id': runId,
    'aqven.node.id': node,
    'aqven.agent': agent,
    'aqven.turn': turn,
  };
}

/** A node span's end, from the engine's result. */
export function nodeEndAttributes(result: Pick<NodeResult, 'status' | 'error' | 'usage' | 'attempts'>): Attributes {
  return {
    'aqven.node.status': result.status,
    'aqven.attempts': result.attempts.length,
    'aqven.usage.input_tokens': result.usage.inputTokens,
    'aqven.usage.output_tokens': result.usage.outputTokens,
    'aqven.cost_usd': result.usage.costUsd,
    ...(result.error && { 'error.type': result.error.code }),
  };
}

type AttemptStart = Extract<EngineEvent, { type: 'attempt_start' }>;

/** An attempt span (`chat {model id}`): one answer of one model, the GenAI client span. */
export function attemptStartAttributes(runId: string, node: string, agent: string, e: AttemptStart): Attributes {
  const { provider, modelId } = modelParts(e.model);
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
    'gen_ai.request.model': modelId,
    'aqven.run.id': runId,
    'aqven.node.id': node,
    'aqven.agent': agent,
    'aqven.model': e.model,
    'aqven.attempt.seq': e.seq,
    'aqven.chain_index': e.chainIndex,
    'aqven.answer_no': e.answerNo,
  };
}

/** An attempt span's end: the outcome and what the policy did with it, the usage, the cost. */
export function attemptEndAttributes(a: AttemptRecord): Attributes {
  return {
    ...(a.responseModel && { 'gen_ai.response.model': a.responseModel }),
    ...(a.finishReason !== null && { 'gen_ai.response.finish_reasons': [a.finishReason] }),
    'gen_ai.usage.input_tokens': a.usage.inputTokens,
    'gen_ai.usage.output_tokens': a.usage.outputTokens,
    ...(a.reasoningTokens !== undefined && { 'gen_ai.usage.reasoning.output_tokens': a.reasoningTokens }),
    ...(a.error && { 'error.type': a.error.kind }),
    'aqven.outcome': a.outcome,
    ...(a.cause && { 'aqven.cause': a.cause }),
    'aqven.action': a.action,
    ...(a.nativeFinishReason && { 'aqven.native_finish_reason': a.nativeFinishReason }),
    'aqven.discarded': a.discarded,
    'aqven.cost_usd': a.usage.costUsd,
    ...(a.costSource && { 'aqven.cost_source': a.costSource }),
    'aqven.usage_unknown': a.usageUnknown === true,
    'aqven.tries': a.tries.length,
  };
}

/** An attempt the run's stop cut off (attempt_interrupted): what the provider had reported. */
export function attemptCutAttributes(e: Extract<EngineEvent, { type: 'attempt_interrupted' }>): Attributes {
  return {
    'gen_ai.usage.input_tokens': e.usage.inputTokens,
    'gen_ai.usage.output_tokens': e.usage.outputTokens,
    'aqven.cost_usd': e.usage.costUsd,
    'aqven.usage_unknown': e.usageUnknown,
    'error.type': 'interrupted',
  };
}

/**
 * A try span (`POST`): one HTTP exchange, as the HTTP client conventions name it, with the wait
 * before it and the rate-limit pause its 429 set. No URL: a provider's base_url may carry credentials.
 */
export function tryAttributes(t: TryRecord, pause: (PauseOrigin & { pausedUntil: number }) | null): Attributes {
  const errorType = t.status !== null && t.status >= 400 ? String(t.status) : t.error;
  return {
    'http.request.method': 'POST',
    ...(t.status !== null && { 'http.response.status_code': t.status }),
    ...(t.tryNo > 1 && { 'http.request.resend_count': t.tryNo - 1 }),
    ...(errorType && { 'error.type': errorType }),
    'aqven.try.no': t.tryNo,
    ...(t.error && { 'aqven.try.error': t.error }),
    'aqven.waited_ms': t.waitedMs,
    ...(t.retryAfterMs !== null && { 'aqven.retry_after_ms': t.retryAfterMs }),
    ...(pause && {
      'aqven.pause.until': pause.pausedUntil,
      'aqven.pause.asked_ms': pause.askedMs,
      'aqven.pause.max_wait_ms': pause.maxWaitMs,
      'aqven.pause.capped': pause.askedMs > pause.maxWaitMs,
      ...(pause.serverWait !== null && { 'aqven.pause.server_wait': pause.serverWait }),
    }),
  };
}

/** A try failed: an HTTP error status, or no answer (timeout, connection, a rate-limit event, cut off). */
export function tryFailed(t: TryRecord): boolean {
  return t.error !== null || (t.status !== null && t.status >= 400);
}

const part = (content: string) => ({ type: 'text', content: redact(content) });

/**
 * The prompt as the conventions record it (content capture on): system messages as
 * gen_ai.system_instructions, the conversation as gen_ai.input.messages, JSON text, redacted.
 */
export function inputContent(request: readonly Message[]): Attributes {
  const system = request.filter((m) => m.role === 'system');
  const conversation = request.filter((m) => m.role !== 'system');
  return {
    ...(system.length > 0 && { 'gen_ai.system_instructions': JSON.stringify(system.map((m) => part(m.content))) }),
    'gen_ai.input.messages': JSON.stringify(conversation.map((m) => ({ role: m.role, parts: [part(m.content)] }))),
  };
}

/** The answer as the conventions record it (content capture on): gen_ai.output.messages, redacted. */
export function outputContent(a: AttemptRecord): Attributes {
  if (a.responseText === null) return {};
  const message = { role: 'assistant', parts: [part(a.responseText)], finish_reason: a.finishReason ?? '' };
  return { 'gen_ai.output.messages': JSON.stringify([message]) };
}
