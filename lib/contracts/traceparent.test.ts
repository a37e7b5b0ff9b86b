// The W3C traceparent a service sends with POST /api/runs: read as the spec reads it, anything
// malformed ignored (the run starts its own trace).
import { describe, expect, it } from 'vitest';
import { parseTraceparent } from './traceparent';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it("reads the spec's own example, sampled or not", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true, header: `00-${TRACE}-${SPAN}-01` });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toMatchObject({ sampled: false });
    // surrounding whitespace is the header's, not the value's
    expect(parseTraceparent(` 00-${TRACE}-${SPAN}-01 `)).toMatchObject({ traceId: TRACE });
  });

  it('reads a later version as far as version 00 goes, and sends it on as version 00', () => {
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-brings`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true, header: `00-${TRACE}-${SPAN}-01` });
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-09`)).toMatchObject({ sampled: true, header: `00-${TRACE}-${SPAN}-01` });
  });

  it.each([
    ['absent', null],
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more after it', `00-${TRACE}-${SPAN}-01-extra`],
    ['a later version with no dash after the flags', `cc-${TRACE}-${SPAN}-01x`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a trace id of zeros', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['a span id of zeros', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['not hex', `00-${TRACE.slice(0, 31)}g-${SPAN}-01`],
    ['two headers joined', `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01`],
    ['fields out of place', `00${TRACE}-${SPAN}-01-0`],
  ])('ignores a malformed header (%s)', (_, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });
});
