// The run page's header names the run's trace (docs/monitoring.md, "Traces"): its id, a link into the
// team's trace UI when AQVEN_TRACE_URL holds {traceId} (opened apart, no referrer), the reason as a
// tooltip when the setting gives no link, and nothing for a run without a trace.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RunHeader } from '@/components/runs/run-header';
import type { RunDetailResponse } from '@/lib/dashboard/api-types';
import { traceLink } from '@/lib/dashboard/trace-link';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const T = Date.UTC(2026, 0, 5, 9);
const run: RunDetailResponse = {
  id: '01a23000-0000-7000-8000-000000000001',
  flow: 'triage',
  status: 'succeeded',
  input: {},
  output: {},
  error: null,
  turns: 1,
  startedAt: T,
  finishedAt: T + 900,
  nodes: [],
  startedBy: null,
  projectHash: null,
  snapshotId: null,
  traceId: TRACE,
};
const header = (r: RunDetailResponse, template?: string) => renderToStaticMarkup(createElement(RunHeader, { run: r, now: T + 1000, trace: traceLink(r.traceId, template) }));

describe("the run page's trace", () => {
  it('links the trace id to AQVEN_TRACE_URL with the id in place of {traceId}', () => {
    const html = header(run, 'https://jaeger.example/trace/{traceId}');
    expect(html).toContain('<dt>Trace</dt>');
    expect(html).toContain(`<a href="https://jaeger.example/trace/${TRACE}" target="_blank" rel="noopener noreferrer" data-testid="run-trace-link">${TRACE}</a>`);
  });

  it('shows the id without a link when AQVEN_TRACE_URL is unset, and says why when it cannot be used', () => {
    expect(header(run)).toContain(`<span>${TRACE}</span>`);
    expect(header(run)).not.toContain('run-trace-link');
    expect(header(run, 'https://jaeger.example/trace/')).toContain(`title="AQVEN_TRACE_URL must be an http(s) URL holding {traceId}`);
  });

  it('says nothing of a trace for a run without one', () => {
    expect(header({ ...run, traceId: null }, 'https://jaeger.example/trace/{traceId}')).not.toContain('run-trace');
  });
});
