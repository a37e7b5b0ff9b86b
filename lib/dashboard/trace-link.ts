// Where a run's trace is shown (DESIGN: Observability, "Traces"): the run page names the run's
// trace id, and links it to the team's trace UI when AQVEN_TRACE_URL is set — a URL with
// `{traceId}` where the id goes (Jaeger `https://jaeger.example/trace/{traceId}`, Grafana Tempo's
// explore URL, Honeycomb's trace link). Pure: the server reads the variable, the header renders this.

/** the variable naming the trace UI */
export const TRACE_URL_ENV = 'AQVEN_TRACE_URL';
/** what AQVEN_TRACE_URL must hold where the trace id goes */
export const TRACE_ID_PLACEHOLDER = '{traceId}';

/** The run's trace link: its URL, or why AQVEN_TRACE_URL gives none (said on the page, never thrown). */
export type TraceLink = { href: string } | { problem: string } | null;

/** The link of trace `traceId` under `template` (AQVEN_TRACE_URL); null when either is absent. */
export function traceLink(traceId: string | null | undefined, template: string | undefined): TraceLink {
  const t = template?.trim();
  if (!traceId || !t) return null;
  const problem = `${TRACE_URL_ENV} must be an http(s) URL holding ${TRACE_ID_PLACEHOLDER}, e.g. https://jaeger.example/trace/${TRACE_ID_PLACEHOLDER}`;
  if (!t.includes(TRACE_ID_PLACEHOLDER)) return { problem };
  let url: URL;
  try {
    url = new URL(t.split(TRACE_ID_PLACEHOLDER).join(traceId));
  } catch {
    return { problem };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem };
  return { href: url.toString() };
}
