// `aqven alerts test` in the test's process (runCli over a captured CliIo): a sample alert through
// the configured webhook — a real receiver on loopback — and the HTTP status reported; the URL's
// secret part never printed; a refusal, a missing section or variable said in one line.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyShowcase } from '../helpers/showcase';
import { webhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { aqvenHere } from './aqven-process';

let hook: WebhookReceiver | null = null;
afterEach(async () => {
  await hook?.close();
  hook = null;
});

function project(alerts: string | null): string {
  const dir = copyShowcase();
  const file = join(dir, 'aqven.yaml');
  if (alerts !== null) writeFileSync(file, `${readFileSync(file, 'utf8')}alerts:\n${alerts}`);
  return dir;
}

describe('aqven alerts test', () => {
  it('sends a sample through the webhook in its format and prints the status, the host alone', async () => {
    hook = await webhookReceiver();
    const dir = project('  webhook: { url_env: SHOWCASE_WEBHOOK_URL }\n');
    const res = await aqvenHere(['alerts', 'test', '--project', dir], { SHOWCASE_WEBHOOK_URL: hook.url, AQVEN_PUBLIC_URL: 'https://aqven.example.com' });
    const host = new URL(hook.url).host;
    expect(res).toMatchObject({ code: 0, err: '' });
    expect(res.out).toBe(`sent a sample alert (slack) to http://${host}: HTTP 200 after 1 try\n`);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.body).toMatchObject({
      text: expect.stringMatching(/^AQVEN showcase: Test alert from AQVEN: a sample sent by `aqven alerts test` at /),
      blocks: [
        { type: 'section' },
        { type: 'context', elements: [{ type: 'mrkdwn', text: expect.stringContaining('<https://aqven.example.com/failures|Open on the dashboard>') }] },
      ],
    });
  });

  it('a refusing webhook: exit 1, its status and words, never the secret part of the URL', async () => {
    hook = await webhookReceiver();
    hook.answer(404);
    const dir = project('  webhook: { url_env: SHOWCASE_WEBHOOK_URL, format: generic }\n');
    const res = await aqvenHere(['alerts', 'test', '--project', dir], { SHOWCASE_WEBHOOK_URL: hook.url });
    expect(res.code).toBe(1);
    expect(res.err).toBe(`aqven alerts test: the sample alert (generic) was not delivered to http://${new URL(hook.url).host} after 1 try: HTTP 404: upstream_unavailable\n`);
    expect(hook.received[0]!.body).toMatchObject({ source: 'aqven', project: 'showcase', title: 'Test alert from AQVEN', url: null });
    expect(res.out + res.err).not.toContain('s3cr3t');
  });

  it('nothing to send: no alerts: section, or its variable unset (exit 2)', async () => {
    const none = await aqvenHere(['alerts', 'test', '--project', project(null)]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^aqven alerts test: .*aqven\.yaml has no alerts: section: nothing to test/);
    const unset = await aqvenHere(['alerts', 'test', '--project', project('  webhook: { url_env: SHOWCASE_WEBHOOK_URL }\n')], { SHOWCASE_WEBHOOK_URL: undefined });
    expect(unset).toMatchObject({ code: 2, out: '' });
    expect(unset.err).toBe("aqven alerts test: SHOWCASE_WEBHOOK_URL is not set: export it with the webhook's URL (alerts.webhook.url_env in aqven.yaml names it)\n");
  });
});
