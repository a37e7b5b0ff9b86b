// aqven.yaml's `alerts:` (docs/monitoring.md, "Alerts"; docs/project-files.md): a webhook whose URL
// is a secret read from the environment variable the file names (never the URL itself: a project
// file is pushed, shown and stored), its body format, the cool-down and four rules, each on with its
// defaults unless `enabled: false`. What the rules mean and where they are evaluated: lib/observe/alerts/.
import { z } from 'zod';
import { durationSchema } from './duration-schema';
import { envNameAllowed, envPattern } from './env';
import { formatDuration } from './duration';
import { quote } from './limits';
import type { AlertsConfig } from './types';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Every default of `alerts:`, in one place (the docs list them). */
export const ALERT_DEFAULTS = {
  format: 'slack',
  cooldownMs: HOUR,
  newForMs: 24 * HOUR,
  shareThreshold: 0.25,
  shareWindowMs: 15 * MINUTE,
  shareMinNodes: 10,
  pausedLongerThanMs: 5 * MINUTE,
  queuedLongerThanMs: 5 * MINUTE,
} as const;

/** the shortest cool-down: a smaller one would page on every failing run */
export const COOLDOWN_MIN_MS = 1000;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The variable the webhook URL is read from: only one named for a webhook (env.ts), like api_key_env. */
const urlEnvSchema = z.string().superRefine((name, ctx) => {
  if (!ENV_NAME.test(name)) {
    ctx.addIssue({
      code: 'custom',
      message: `alerts.webhook.url_env "${quote(name)}" is not the name of an environment variable`,
      params: { hint: 'write a variable name such as "SLACK_WEBHOOK_URL", and export the webhook URL under it' },
    });
  } else if (!envNameAllowed(name, 'url_env')) {
    ctx.addIssue({
      code: 'custom',
      message: `alerts.webhook.url_env names ${name}, a variable project files may not read: url_env takes only ${envPattern('url_env')}`,
      params: { code: 'E_ENV_NAME', hint: 'export the webhook URL under an allowed name (e.g. SLACK_WEBHOOK_URL) and name that' },
    });
  }
});

/** every rule is on unless `enabled: false`, its settings defaulted */
const enabled = z.boolean().default(true).describe('false switches the rule off');

export const alertsSchema = z.strictObject({
  webhook: z
    .strictObject({
      url_env: urlEnvSchema.describe('the environment variable holding the webhook URL (a secret, never written here): a name ending in _WEBHOOK_URL or _WEBHOOK'),
      /** slack: `{ "text", "blocks" }` (Slack, Mattermost, Rocket.Chat, Teams' Slack-compatible hooks); generic: the alert's fields as JSON */
      format: z.enum(['slack', 'generic']).default(ALERT_DEFAULTS.format).describe('slack: {"text", "blocks"}; generic: the alert\'s fields as JSON'),
    })
    .describe('where alerts go'),
  cooldown: durationSchema
    .default(ALERT_DEFAULTS.cooldownMs)
    .refine((ms) => ms >= COOLDOWN_MIN_MS, {
      message: `alerts.cooldown must be at least ${formatDuration(COOLDOWN_MIN_MS)}`,
      params: { hint: 'one alert per key per cool-down: "1h" is the default' },
    })
    .describe('one alert per key (a failure group, an agent, a model, the queue) per cool-down, across every process'),
  rules: z
    .strictObject({
      /** a failure group (signature) of an agent first seen less than new_for ago */
      new_failure: z
        .strictObject({ enabled, new_for: durationSchema.default(ALERT_DEFAULTS.newForMs).describe('a failure group counts as new this long after its first failure') })
        .prefault({})
        .describe('a node fails with a failure signature first seen less than new_for ago'),
      /** an agent's failed nodes over its finished nodes in the last `window` passes `threshold` (with at least min_nodes finished) */
      failure_share: z
        .strictObject({
          enabled,
          threshold: z.number().gt(0).max(1).default(ALERT_DEFAULTS.shareThreshold).describe('the share of failed nodes (0 to 1) at or above which it fires'),
          window: durationSchema.default(ALERT_DEFAULTS.shareWindowMs).describe('the nodes started this long ago or since'),
          min_nodes: z.number().int().min(1).max(1_000_000).default(ALERT_DEFAULTS.shareMinNodes).describe('finished nodes needed in the window before a share counts'),
        })
        .prefault({})
        .describe("an agent's failed nodes over its finished nodes in the window reach threshold"),
      /** a model paused by rate limits for longer than this without a break */
      model_paused: z
        .strictObject({ enabled, longer_than: durationSchema.default(ALERT_DEFAULTS.pausedLongerThanMs).describe('how long a pause may last unbroken') })
        .prefault({})
        .describe('a model stays paused by rate limits longer than longer_than (checked by aqven serve and aqven worker)'),
      /** PostgreSQL mode: the oldest queued run has waited longer than this for a worker */
      queue_wait: z
        .strictObject({ enabled, longer_than: durationSchema.default(ALERT_DEFAULTS.queuedLongerThanMs).describe('how long a run may wait for a worker') })
        .prefault({})
        .describe('PostgreSQL mode: the oldest queued run waits longer than longer_than (checked by aqven serve and aqven worker)'),
    })
    .prefault({})
    .describe('each rule is on with its defaults unless enabled: false'),
});

export type AlertsFile = z.output<typeof alertsSchema>;

/** The file's `alerts:` as the project carries it (durations in ms; a rule switched off is null). */
export function toAlertsConfig(a: AlertsFile): AlertsConfig {
  const { new_failure: nf, failure_share: fs, model_paused: mp, queue_wait: qw } = a.rules;
  return {
    webhook: { urlEnv: a.webhook.url_env, format: a.webhook.format },
    cooldownMs: a.cooldown,
    rules: {
      newFailure: nf.enabled ? { newForMs: nf.new_for } : null,
      failureShare: fs.enabled ? { threshold: fs.threshold, windowMs: fs.window, minNodes: fs.min_nodes } : null,
      modelPaused: mp.enabled ? { longerThanMs: mp.longer_than } : null,
      queueWait: qw.enabled ? { longerThanMs: qw.longer_than } : null,
    },
  };
}

export type WebhookUrl = { ok: true; url: URL } | { ok: false; problem: string };

/**
 * The webhook URL from the variable `urlEnv` names: read when an alert is sent (and by `aqven check`
 * for W_ALERT_WEBHOOK). The problem never repeats the value: it is a secret.
 */
export function readWebhookUrl(env: Record<string, string | undefined>, urlEnv: string): WebhookUrl {
  const raw = Object.hasOwn(env, urlEnv) ? env[urlEnv]?.trim() : undefined;
  if (!raw) return { ok: false, problem: `${urlEnv} is not set` };
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return { ok: false, problem: `${urlEnv} is not an http(s) URL` };
  return { ok: true, url };
}
