// The OpenTelemetry SDK set up for AQVEN's run spans (DESIGN: Observability, "Traces"), loaded only
// when the environment asks for traces (tracing.ts): a tracer provider whose resource is
// service.name `aqven` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise, its
// sampler from OTEL_TRACES_SAMPLER, one BatchSpanProcessor over the OTLP/HTTP exporter (which reads
// its endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables), and
// the run observer (run-spans.ts) registered on the seam.
import { diag, DiagLogLevel, type DiagLogFunction } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { addRunObserver } from '@/lib/flow/run-observers';
import { runSpansObserver } from './run-spans';

type Env = Record<string, string | undefined>;

/** the longest a command waits at its end for the spans still queued to be sent */
export const TRACE_FLUSH_MAX_MS = 5_000;
/** the tracer's instrumentation scope */
export const TRACER_NAME = 'aqven';
/** the SDK's complaints printed per process, at most (each text once) */
const DIAG_LINES_MAX = 20;

export interface Tracing {
  /** sends what is queued now (bounded by TRACE_FLUSH_MAX_MS) */
  flush(): Promise<void>;
  /** stops tracing runs, sends what is queued (bounded by TRACE_FLUSH_MAX_MS) and shuts the exporter */
  shutdown(): Promise<void>;
}

export interface ExportOptions {
  env: Env;
  log: (line: string) => void;
  version?: string;
  captureContent: boolean;
}

/**
 * The SDK's own complaints (an export the collector refused or did not answer) as lines of `log`:
 * each text once, the export headers' values (they may hold a key) scrubbed.
 */
function diagnostics(env: Env, log: (line: string) => void): void {
  const secrets = [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]
    .flatMap((h) => (h ?? '').split(','))
    .map((kv) => kv.slice(kv.indexOf('=') + 1).trim())
    .filter((v) => v.length >= 4);
  const said = new Set<string>();
  const say: DiagLogFunction = (message, ...args) => {
    let text = [message, ...args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : ''))].filter(Boolean).join(' ');
    for (const s of secrets) text = text.split(s).join('<SECRET>');
    if (said.has(text) || said.size >= DIAG_LINES_MAX) return;
    said.add(text);
    log(`aqven: traces: ${text.slice(0, 500)}`);
  };
  const quiet: DiagLogFunction = () => undefined;
  diag.setLogger({ error: say, warn: say, info: quiet, debug: quiet, verbose: quiet }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
}

/** Resolves when `p` settles or `ms` pass, whichever is first; never rejects. */
function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([
    p.then(
      () => undefined,
      () => undefined,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

/** Exports every run's spans from now on; `onShutdown` hears when it stops. */
export function exportTraces(o: ExportOptions, onShutdown: () => void): Tracing {
  diagnostics(o.env, o.log);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'aqven', ...(o.version && { 'service.version': o.version }) }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const remove = addRunObserver(runSpansObserver({ tracer: provider.getTracer(TRACER_NAME, o.version), captureContent: o.captureContent }));
  return {
    flush: () => bounded(provider.forceFlush(), TRACE_FLUSH_MAX_MS),
    shutdown: async () => {
      remove();
      onShutdown();
      await bounded(provider.shutdown(), TRACE_FLUSH_MAX_MS);
      diag.disable();
    },
  };
}
