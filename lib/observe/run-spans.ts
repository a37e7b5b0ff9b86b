// A run as OpenTelemetry spans (DESIGN: Observability, "Traces"): a RunObserver (the seam,
// lib/flow/run-observers.ts) that opens the run's span when the run starts — a child of the
// caller's span when a traceparent came with it — and, from the run's own facts as they happen, a
// span per node, per attempt and per transport try, each a child of the one before:
//
//   invoke_workflow {flow}          the run (INTERNAL)
//     invoke_agent {agent}          a node (INTERNAL), from its turn's start to its end
//       chat {model id}             an attempt: one answer of one model (CLIENT, the GenAI span)
//         POST                      a transport try: one HTTP exchange (CLIENT, the HTTP span)
//
// Every span starts and ends at the times the run records (the engine's startedAt/finishedAt, the
// tries' records, the turn's start), so a run on a virtual clock gives spans on that clock. Spans
// are handed to the tracer's processor as they end, never waited for. A run the stop cut off ends
// its open spans from its record (run_end / run_handed_back): the attempts it closed, its nodes.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { AttemptRecord, EngineEvent, PauseOrigin } from '@/lib/engine/types';
import type { ObservedRun, RunObserver, RunWatch } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import type { NodeJson, RunRecord } from '@/lib/flow/run-record';
import {
  attemptCutAttributes,
  attemptEndAttributes,
  attemptStartAttributes,
  failureText,
  inputContent,
  modelParts,
  nodeEndAttributes,
  nodeStartAttributes,
  outputContent,
  runEndAttributes,
  runStartAttributes,
  tryAttributes,
  tryFailed,
} from './span-attributes';

export interface RunSpansOptions {
  tracer: Tracer;
  /** prompts and answers on the attempt spans, redacted (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) */
  captureContent: boolean;
}

type Pause = PauseOrigin & { pausedUntil: number };

interface OpenAttempt {
  span: Span;
  ctx: Context;
}

interface OpenNode {
  span: Span;
  ctx: Context;
  agent: string;
  /** the attempt in flight: a node sends one at a time */
  attempt: { seq: number; open: OpenAttempt } | null;
  /** a pause the try in flight set (rate_limit_pause comes before its try_end) */
  pause: Pause | null;
}

/** The caller's span as a parent context, or the root. */
function parentContext(run: ObservedRun): Context {
  const p = run.parent;
  if (!p) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: p.traceId, spanId: p.spanId, traceFlags: p.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });
}

function fail(span: Span, message: string | null | undefined): void {
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message && { message: failureText(message) }) });
}

/** The spans of one run, fed its facts in order. */
class RunSpans implements RunWatch {
  readonly traceId: string;
  private readonly ctx: Context;
  private readonly nodes = new Map<string, OpenNode>();
  private ended = false;

  constructor(
    private readonly o: RunSpansOptions,
    private readonly run: ObservedRun,
    private readonly span: Span,
  ) {
    this.traceId = span.spanContext().traceId;
    this.ctx = trace.setSpan(ROOT_CONTEXT, span);
  }

  event(e: ProgressEvent): void {
    if (this.ended) return;
    switch (e.type) {
      case 'engine':
        return this.engine(e.node, e.event);
      case 'turn_start':
        for (const id of e.nodes) this.startNode(id, e.turn, e.at);
        return;
      case 'node_skipped':
        this.span.addEvent('aqven.node_skipped', { 'aqven.node.id': e.node, 'aqven.reason': e.reason }, e.at);
        return;
      case 'node_end': {
        const n = this.nodes.get(e.node);
        if (!n) return;
        this.nodes.delete(e.node);
        n.span.setAttributes(nodeEndAttributes(e.result));
        if (e.result.error) fail(n.span, e.result.error.message);
        n.span.end(e.at);
        return;
      }
      case 'run_end':
        return this.end(e.record, e.record.finishedAt ? Date.parse(e.record.finishedAt) : Date.now(), null);
      case 'run_handed_back':
        return this.end(e.record, e.at, e.reason);
    }
  }

  private startNode(id: string, turn: number, at: number): void {
    const agent = this.run.agents[id] ?? '';
    const span = this.o.tracer.startSpan(
      `invoke_agent ${agent}`,
      { kind: SpanKind.INTERNAL, startTime: at, attributes: nodeStartAttributes(this.run.runId, id, agent, turn) },
      this.ctx,
    );
    this.nodes.set(id, { span, ctx: trace.setSpan(ROOT_CONTEXT, span), agent, attempt: null, pause: null });
  }

  private engine(node: string, e: EngineEvent): void {
    const n = this.nodes.get(node);
    if (!n) return;
    switch (e.type) {
      case 'attempt_start': {
        const { modelId } = modelParts(e.model);
        const attributes = { ...attemptStartAttributes(this.run.runId, node, n.agent, e), ...(this.o.captureContent && inputContent(e.request)) };
        const span = this.o.tracer.startSpan(`chat ${modelId}`, { kind: SpanKind.CLIENT, startTime: e.startedAt, attributes }, n.ctx);
        n.attempt = { seq: e.seq, open: { span, ctx: trace.setSpan(ROOT_CONTEXT, span) } };
        return;
      }
      case 'rate_limit_pause':
        n.pause = { ...e.origin, pausedUntil: e.pausedUntil };
        return;
      case 'try_end': {
        if (n.attempt?.seq !== e.seq) return;
        const t = e.try;
        const span = this.o.tracer.startSpan('POST', { kind: SpanKind.CLIENT, startTime: t.startedAt, attributes: tryAttributes(t, n.pause) }, n.attempt.open.ctx);
        n.pause = null;
        if (tryFailed(t)) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end(t.finishedAt);
        return;
      }
      case 'attempt_end': {
        if (n.attempt?.seq !== e.attempt.seq) return;
        this.endAttempt(n.attempt.open.span, e.attempt);
        n.attempt = null;
        return;
      }
      case 'attempt_interrupted':
        // closed by the run's end, from its record (the time the stop closed it)
        if (n.attempt?.seq === e.seq) n.attempt.open.span.setAttributes(attemptCutAttributes(e));
        return;
    }
  }

  private endAttempt(span: Span, a: AttemptRecord): void {
    span.setAttributes({ ...attemptEndAttributes(a), ...(this.o.captureContent && outputContent(a)) });
    if (a.error) fail(span, a.error.message);
    span.end(a.finishedAt);
  }

  /** The run's end at `at` (or its hand-back): what is still open ends as the record has it, then the run span. */
  private end(record: RunRecord, at: number, handedBack: string | null): void {
    this.ended = true;
    for (const [id, n] of this.nodes)
      this.closeNode(
        n,
        record.nodes.find((x) => x.id === id),
        at,
      );
    this.nodes.clear();
    this.span.setAttributes(runEndAttributes(record));
    if (handedBack !== null) this.span.setAttribute('aqven.handed_back', handedBack);
    if (record.status === 'failed' || record.status === 'interrupted') fail(this.span, record.error?.message);
    this.span.end(at);
  }

  /** A node the stop left open at `at`: its attempt in flight closed as the stop closed it, then the node as recorded. */
  private closeNode(n: OpenNode, node: NodeJson | undefined, at: number): void {
    if (n.attempt) {
      const seq = n.attempt.seq;
      const closed = node?.attempts.find((x) => x.seq === seq);
      fail(n.attempt.open.span, closed?.error?.message ?? 'the run ended while the attempt was in flight');
      n.attempt.open.span.end(at);
    }
    if (node) {
      n.span.setAttribute('aqven.node.status', node.status);
      if (node.error) n.span.setAttribute('error.type', node.error.code);
      if (node.status === 'failed') fail(n.span, node.error?.message);
    }
    n.span.end(at);
  }
}

/** The tracer as a run observer: it opens each run's trace, so every other observer knows its id. */
export function runSpansObserver(o: RunSpansOptions): RunObserver {
  return {
    opensTraces: true,
    watch(run) {
      const name = `invoke_workflow ${run.flow}`;
      const span = o.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: run.startedAt, attributes: runStartAttributes(run) }, parentContext(run));
      // not sampled: nothing more to do for this run, and no trace to link to
      if (!span.isRecording()) return null;
      return new RunSpans(o, run, span);
    },
  };
}
