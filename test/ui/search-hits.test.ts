// The hits of a search as /search renders them, and the choices an ambiguous short id offers:
// each hit links to its run (on the node or attempt whose text it is), its words marked, and text
// from the history shown as text, never as markup.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AmbiguousRunId } from '@/components/search/ambiguous-run-id';
import { hitHref, SearchHits } from '@/components/search/search-hits';
import type { SearchHit } from '@/db/search-queries';

const ID = '3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';
const T = Date.UTC(2026, 0, 1, 9);
const hit = (over: Partial<SearchHit>): SearchHit => ({
  runId: ID,
  flow: 'triage',
  status: 'failed',
  kind: 'flow',
  startedAt: T,
  field: 'input',
  nodeId: null,
  attemptSeq: null,
  at: T,
  snippet: [
    { text: 'a ', hit: false },
    { text: 'refund', hit: true },
  ],
  ...over,
});

describe('a search hit', () => {
  it('links to the run, on the node of an output and on the attempt of a failure', () => {
    expect(hitHref(hit({}))).toBe(`/runs/${ID}`);
    expect(hitHref(hit({ field: 'output', nodeId: 'draft' }))).toBe(`/runs/${ID}#node-draft`);
    expect(hitHref(hit({ field: 'error', nodeId: 'classify', attemptSeq: 2 }))).toBe(`/runs/${ID}#attempt-classify-2`);
    expect(hitHref(hit({ field: 'error', nodeId: 'manual_review' }))).toBe(`/runs/${ID}#node-manual_review`);
  });

  it('shows the short id, where the words are, and marks them; stored text stays text', () => {
    const html = renderToStaticMarkup(
      createElement(SearchHits, {
        hits: [
          hit({
            field: 'error',
            nodeId: 'classify',
            attemptSeq: 2,
            snippet: [
              { text: '<img src=x onerror="alert(1)"> ', hit: false },
              { text: 'overloaded', hit: true },
            ],
          }),
          hit({ runId: 'b'.repeat(36), field: 'output', nodeId: 'draft', kind: 'replay', status: 'succeeded' }),
        ],
      }),
    );
    // the short id: the start of the id's last group
    expect(html).toContain('>1c2d3e4f</span>');
    expect(html).toContain('error in classify, attempt #2');
    expect(html).toContain('<mark>overloaded</mark>');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).not.toMatch(/<img/);
    expect(html).toContain('output of draft');
    expect(html).toContain('<span class="tag">replay</span>');
    expect(html.match(/data-testid="search-hit"/g)).toHaveLength(2);
  });
});

describe('an ambiguous short id', () => {
  it('lists the runs it could mean, each a link to its run, and says when there are more', () => {
    const other = '3f2a9c1e-0000-4000-8000-000000000000';
    const html = renderToStaticMarkup(
      createElement(AmbiguousRunId, {
        prefix: '3f2a9c1e',
        more: true,
        matches: [
          { id: ID, flow: 'triage', status: 'failed', kind: 'flow', startedAt: T },
          { id: other, flow: 'long-answer', status: 'succeeded', kind: 'flow', startedAt: T - 1 },
        ],
      }),
    );
    expect(html).toContain('names more than 2 runs (by the start of their id or of their short id)');
    expect(html).toContain(`href="/runs/${ID}"`);
    expect(html).toContain(`href="/runs/${other}"`);
    expect(html.match(/data-testid="run-choice"/g)).toHaveLength(2);
    expect(html).toContain('… and more');
  });
});
