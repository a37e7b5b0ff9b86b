// Traces out of the process (DESIGN: Observability, "Traces"): the one function `aqven run`,
// `aqven serve` and `aqven worker` call at start. Off — nothing registered, nothing loaded into a
// run's path — unless the standard OpenTelemetry environment asks for it: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_SDK_DISABLED not true,
// OTEL_TRACES_EXPORTER not `none`. The SDK itself reads the rest as it documents it: the headers,
// timeout and compression of the export, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, the
// sampler (OTEL_TRACES_SAMPLER, _ARG), the batch (OTEL_BSP_*). Spans leave in batches from a
// BatchSpanProcessor (a full queue drops spans, it never waits), as OTLP/HTTP JSON (trace-export.ts).
import type { Tracing } from './trace-export';

export type { Tracing };

type Env = Record<string, string | undefined>;

/** the GenAI conventions' switch for prompts and answers on spans (off unless exactly `true`, any case) */
export const CAPTURE_CONTENT_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';
export interface TracingOptions {
  /** service.version on the resource */
  version?: string;
  /** one line, for what the user should know (a bad variable, the collector not answering) */
  log?: (line: string) => void;
}

const set = (v: string | undefined) => v !== undefined && v.trim() !== '';

/** Why the environment's traces setting cannot be used, or null when it can (or asks for none). */
function endpointProblem(env: Env): string | null {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    const raw = env[name];
    if (!set(raw)) continue;
    let url: URL | null = null;
    try {
      url = new URL(raw!.trim());
    } catch {
      // said below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol)) return `${name} must be an http(s) URL such as http://localhost:4318, got "${raw!.slice(0, 80)}"`;
    return null; // the signal's own endpoint wins, as the SDK reads it
  }
  return null;
}

/** Whether the environment asks for traces (an OTLP endpoint set, the SDK not disabled, the exporter not `none`). */
export function tracesWanted(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** The settings this exporter cannot honour, each said once (it sends OTLP over HTTP as JSON). */
function unsupported(env: Env): string[] {
  const out: string[] = [];
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter && exporter !== 'otlp') out.push(`OTEL_TRACES_EXPORTER=${exporter} is not supported: traces are exported over OTLP`);
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const p = env[name]?.trim();
    if (!p) continue;
    if (p !== 'http/json') out.push(`${name}=${p} is not supported: traces are sent as OTLP/HTTP JSON (http/json), which a collector's HTTP receiver (port 4318) accepts`);
    break;
  }
  return out;
}

let active: Tracing | null = null;

/**
 * Starts tracing every run of this process when the environment asks for it (tracesWanted), else
 * resolves null having loaded nothing. A second call gets the first one's tracing.
 */
export async function startTracing(o: TracingOptions = {}): Promise<Tracing | null> {
  if (active) return active;
  const env = process.env;
  const log = o.log ?? ((line: string) => console.error(line));
  if (!tracesWanted(env)) return null;
  const problem = endpointProblem(env);
  if (problem) {
    log(`aqven: ${problem}; traces are off`);
    return null;
  }
  for (const line of unsupported(env)) log(`aqven: ${line}`);
  // the SDK is loaded only now: a process without traces never loads it
  const { exportTraces } = await import('./trace-export');
  if (active) return active;
  const tracing = exportTraces({ env, log, version: o.version, captureContent: env[CAPTURE_CONTENT_ENV]?.trim().toLowerCase() === 'true' }, () => {
    if (active === tracing) active = null;
  });
  active = tracing;
  return tracing;
}
