// The run page's trace link: AQVEN_TRACE_URL with the run's trace id in place of {traceId}; a
// setting without the placeholder or not http(s) gives no link and says why.
import { describe, expect, it } from 'vitest';
import { traceLink } from './trace-link';

const ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('traceLink', () => {
  it('puts the trace id where {traceId} is, in a path or a query, as often as it is there', () => {
    expect(traceLink(ID, 'https://jaeger.example/trace/{traceId}')).toEqual({ href: `https://jaeger.example/trace/${ID}` });
    expect(traceLink(ID, ' https://ui.honeycomb.io/t/datasets/aqven/trace?trace_id={traceId}&a={traceId} ')).toEqual({
      href: `https://ui.honeycomb.io/t/datasets/aqven/trace?trace_id=${ID}&a=${ID}`,
    });
  });

  it('gives nothing without a trace id or a setting', () => {
    expect(traceLink(null, 'https://jaeger.example/trace/{traceId}')).toBeNull();
    expect(traceLink(ID, undefined)).toBeNull();
    expect(traceLink(ID, '  ')).toBeNull();
  });

  it.each([['https://jaeger.example/trace/'], ['javascript:alert({traceId})'], ['jaeger.example/{traceId}']])('says why %s gives no link', (template) => {
    expect(traceLink(ID, template)).toEqual({ problem: expect.stringContaining('AQVEN_TRACE_URL must be an http(s) URL holding {traceId}') });
  });
});
