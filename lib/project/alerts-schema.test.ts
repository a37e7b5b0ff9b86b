// aqven.yaml's `alerts:` as `aqven check` reads it: the defaults a bare webhook gets, a rule
// switched off, and bad values refused at their field with the field named.
import { describe, expect, it } from 'vitest';
import { writeProject } from '@/test/helpers/fixture-project';
import { ALERT_DEFAULTS, readWebhookUrl } from './alerts-schema';
import { loadProject } from './load';

const PROJECT = 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "fixture"\n';
const ENV = { OPENROUTER_API_KEY: 'sk-test', SLACK_WEBHOOK_URL: 'https://hooks.example.com/T0/B0/secret' };

async function load(alerts: string) {
  return loadProject(await writeProject({ 'aqven.yaml': `${PROJECT}alerts:\n${alerts}` }), { env: ENV });
}

describe('aqven.yaml alerts:', () => {
  it('a webhook alone turns every rule on with its defaults', async () => {
    const { project, diagnostics } = await load('  webhook: { url_env: SLACK_WEBHOOK_URL }\n');
    expect(diagnostics).toEqual([]);
    expect(project!.alerts).toEqual({
      webhook: { urlEnv: 'SLACK_WEBHOOK_URL', format: 'slack' },
      cooldownMs: 3_600_000,
      rules: {
        newFailure: { newForMs: 24 * 3_600_000 },
        failureShare: { threshold: 0.25, windowMs: 15 * 60_000, minNodes: 10 },
        modelPaused: { longerThanMs: 5 * 60_000 },
        queueWait: { longerThanMs: 5 * 60_000 },
      },
    });
    expect(project!.alerts!.cooldownMs).toBe(ALERT_DEFAULTS.cooldownMs);
  });

  it('reads each setting, and a rule with enabled: false is off', async () => {
    const { project, diagnostics } = await load(
      [
        '  webhook: { url_env: SLACK_WEBHOOK_URL, format: generic }',
        '  cooldown: 30m',
        '  rules:',
        '    new_failure: { new_for: 2h }',
        '    failure_share: { threshold: 0.5, window: 1h, min_nodes: 40 }',
        '    model_paused: { enabled: false }',
        '    queue_wait: { longer_than: 90s }',
        '',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([]);
    expect(project!.alerts).toEqual({
      webhook: { urlEnv: 'SLACK_WEBHOOK_URL', format: 'generic' },
      cooldownMs: 1_800_000,
      rules: {
        newFailure: { newForMs: 7_200_000 },
        failureShare: { threshold: 0.5, windowMs: 3_600_000, minNodes: 40 },
        modelPaused: null,
        queueWait: { longerThanMs: 90_000 },
      },
    });
  });

  it('a project without alerts: has none', async () => {
    const { project } = await loadProject(await writeProject({}), { env: ENV });
    expect(project!.alerts).toBeUndefined();
  });

  it.each([
    ['  webhook: { url_env: SLACK_WEBHOOK_URL }\n  cooldown: 0s\n', ['alerts', 'cooldown'], /alerts\.cooldown must be at least 1s/],
    ['  webhook: { url_env: SLACK_WEBHOOK_URL }\n  rules: { failure_share: { threshold: 1.5 } }\n', ['alerts', 'rules', 'failure_share', 'threshold'], /at most 1/],
    ['  webhook: { url_env: SLACK_WEBHOOK_URL }\n  rules: { new_failures: {} }\n', ['alerts', 'rules', 'new_failures'], /unknown key "new_failures"/],
    ['  webhook: { url_env: SLACK_WEBHOOK_URL, format: teams }\n', ['alerts', 'webhook', 'format'], /"slack", "generic"/],
    // the URL itself is never written in the file: it is a secret
    ['  webhook: { url: "https://hooks.example.com/x" }\n', ['alerts', 'webhook', 'url'], /unknown key "url"/],
    ['  webhook: { url: "https://hooks.example.com/x" }\n', ['alerts', 'webhook', 'url_env'], /missing required key "url_env"/],
    [
      '  webhook: { url_env: SLACK_WEBHOOK_URL }\n  rules: { model_paused: { longer_than: soon } }\n',
      ['alerts', 'rules', 'model_paused', 'longer_than'],
      /"soon" is not a duration/,
    ],
  ])('refuses %j at its field', async (alerts, path, message) => {
    const { project, diagnostics } = await load(alerts);
    expect(project).toBeNull();
    const d = diagnostics.find((x) => x.severity === 'error' && x.path.join('.') === path.join('.'));
    expect(d, JSON.stringify(diagnostics)).toMatchObject({ file: 'aqven.yaml', path });
    expect(d!.message).toMatch(message);
  });

  it('the webhook URL is read from its variable, and a problem never repeats the value', () => {
    expect(readWebhookUrl({ W_WEBHOOK_URL: ' https://hooks.example.com/T0/B0/secret ' }, 'W_WEBHOOK_URL')).toMatchObject({ ok: true });
    expect(readWebhookUrl({}, 'W_WEBHOOK_URL')).toEqual({ ok: false, problem: 'W_WEBHOOK_URL is not set' });
    const bad = readWebhookUrl({ W_WEBHOOK_URL: 'ftp://hooks.example.com/secret' }, 'W_WEBHOOK_URL');
    expect(bad).toEqual({ ok: false, problem: 'W_WEBHOOK_URL is not an http(s) URL' });
  });
});
