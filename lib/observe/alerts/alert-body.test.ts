// What a webhook receives: Slack's `{ text, blocks }` (mrkdwn escaped, the failure group linked on
// the public URL) or the generic JSON of the alert's fields; the failure text redacted once more.
import { describe, expect, it } from 'vitest';
import type { SignatureOrigin } from '@/db/failure-queries';
import { failureShareAlert, newFailureAlert, queueWaitAlert } from './alert';
import { alertBody, alertUrl } from './alert-body';
import { publicUrlOf } from './alerting';

const NOW = Date.UTC(2026, 5, 15, 12);
const origin: SignatureOrigin = {
  sig: '0123456789abcdef',
  level: 'node',
  agent: 'classifier',
  model: '',
  code: 'refusal',
  // stored text is redacted when recorded; an address that slipped through is caught here again
  message: 'the model refused <b>this</b> & wrote to ops@example.com',
  firstAt: NOW - 5 * 60_000,
};
const alert = newFailureAlert(origin, { runId: 'r-1', nodeId: 'classify', flow: 'triage' }, NOW);
const ctx = { project: 'showcase', firedAt: NOW, publicUrl: 'https://aqven.example.com' };

describe('alert bodies', () => {
  it('slack: a notification text and two blocks, the group linked on the public URL, markup escaped', () => {
    const body = alertBody(alert, 'slack', ctx) as { text: string; blocks: { type: string; text?: { type: string; text: string }; elements?: { type: string; text: string }[] }[] };
    expect(Object.keys(body)).toEqual(['text', 'blocks']);
    expect(body.text).toBe(
      'AQVEN showcase: New failure in agent classifier: refusal: the model refused &lt;b&gt;this&lt;/b&gt; &amp; wrote to &lt;EMAIL&gt; (node classify of flow triage, first seen 5 min ago)',
    );
    expect(body.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    expect(body.blocks[0]!.text).toEqual({
      type: 'mrkdwn',
      text: '*New failure in agent classifier* (project showcase)\nrefusal: the model refused &lt;b&gt;this&lt;/b&gt; &amp; wrote to &lt;EMAIL&gt; (node classify of flow triage, first seen 5 min ago)',
    });
    expect(body.blocks[1]!.elements).toEqual([
      { type: 'mrkdwn', text: `new_failure · 2026-06-15T12:00:00.000Z · <https://aqven.example.com/failures?agent=classifier#fg-0123456789abcdef|Open on the dashboard>` },
    ]);
    expect(JSON.stringify(body)).not.toContain('ops@example.com');
  });

  it('slack without a public URL names the page and how to get a link', () => {
    const body = alertBody(alert, 'slack', { ...ctx, publicUrl: null }) as { blocks: { elements?: { text: string }[] }[] };
    expect(body.blocks[1]!.elements![0]!.text).toContain('on the dashboard: /failures?agent=classifier#fg-0123456789abcdef (set AQVEN_PUBLIC_URL for a link)');
  });

  it("generic: the alert's fields, its key and page", () => {
    const body = alertBody(failureShareAlert('classifier', { failed: 12, finished: 30 }, { threshold: 0.25, windowMs: 15 * 60_000 }), 'generic', ctx);
    expect(body).toEqual({
      source: 'aqven',
      project: 'showcase',
      rule: 'failure_share',
      key: 'failure_share:classifier',
      title: 'Agent classifier fails 40% of its nodes',
      text: '12 of 30 nodes failed in the last 15 min (threshold 25%)',
      firedAt: '2026-06-15T12:00:00.000Z',
      url: 'https://aqven.example.com/failures?agent=classifier',
      path: '/failures?agent=classifier',
      details: { agent: 'classifier', failed: 12, finished: 30, share: 0.4, threshold: 0.25, windowMs: 900_000 },
    });
    expect(alertBody(queueWaitAlert({ id: 'r-9', queuedAt: NOW - 7 * 60_000 }, NOW), 'generic', { ...ctx, publicUrl: null })).toMatchObject({
      key: 'queue_wait',
      title: 'A queued run has waited 7 min for a worker',
      url: null,
      path: '/runs?status=queued',
    });
  });

  it('the public URL: AQVEN_PUBLIC_URL as an origin and path, never anything else', () => {
    expect(publicUrlOf({ AQVEN_PUBLIC_URL: 'https://aqven.example.com/dash/' })).toBe('https://aqven.example.com/dash');
    expect(publicUrlOf({ AQVEN_PUBLIC_URL: 'https://aqven.example.com?x=1#y' })).toBe('https://aqven.example.com');
    expect(publicUrlOf({ AQVEN_PUBLIC_URL: 'aqven.example.com' })).toBeNull();
    expect(publicUrlOf({})).toBeNull();
    expect(alertUrl('/providers', 'https://aqven.example.com/dash')).toBe('https://aqven.example.com/dash/providers');
  });
});
