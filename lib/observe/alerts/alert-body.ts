// What a webhook receives for an alert (docs/monitoring.md, "Alerts"): `slack` — Slack's incoming
// webhook message, `{ "text", "blocks" }`, which Mattermost, Rocket.Chat and Discord's `/slack`
// endpoint take too; `generic` — the alert's own fields as JSON, for a receiver of one's own.
// Only the alert's words and details go in (alert.ts): never a key, a webhook URL or unredacted text.
import type { Alert } from './alert';

export type AlertFormat = 'slack' | 'generic';

export interface AlertContext {
  /** the project's name */
  project: string;
  firedAt: number;
  /** the dashboard's public URL (AQVEN_PUBLIC_URL), or null when unknown: the body then names the path alone */
  publicUrl: string | null;
}

/** The alert's page: the public URL's origin and path with the alert's path after it; null without a public URL. */
export function alertUrl(path: string, publicUrl: string | null): string | null {
  if (!publicUrl) return null;
  return `${publicUrl.replace(/\/+$/, '')}${path}`;
}

/** Slack's mrkdwn reads &, < and > as markup: escaped, so no text of ours becomes a link or a mention. */
const slackEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slackBody(a: Alert, c: AlertContext): Record<string, unknown> {
  const url = alertUrl(a.path, c.publicUrl);
  const link = url ? `<${url}|Open on the dashboard>` : `on the dashboard: ${slackEscape(a.path)} (set AQVEN_PUBLIC_URL for a link)`;
  const head = `*${slackEscape(a.title)}* (project ${slackEscape(c.project)})`;
  return {
    // the notification's text, and what a client without blocks shows
    text: slackEscape(`AQVEN ${c.project}: ${a.title}: ${a.text}`),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${head}\n${slackEscape(a.text)}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${a.rule} · ${new Date(c.firedAt).toISOString()} · ${link}` }] },
    ],
  };
}

function genericBody(a: Alert, c: AlertContext): Record<string, unknown> {
  return {
    source: 'aqven',
    project: c.project,
    rule: a.rule,
    key: a.key,
    title: a.title,
    text: a.text,
    firedAt: new Date(c.firedAt).toISOString(),
    url: alertUrl(a.path, c.publicUrl),
    path: a.path,
    details: a.details,
  };
}

/** The JSON body the webhook is sent. */
export function alertBody(a: Alert, format: AlertFormat, c: AlertContext): Record<string, unknown> {
  return format === 'slack' ? slackBody(a, c) : genericBody(a, c);
}
