// `aqven alerts test [--project DIR]` (docs/cli.md; docs/monitoring.md, "Alerts"): sends a sample
// alert through the webhook aqven.yaml's `alerts:` names, as the rules send theirs (its format, its
// retries), and reports the HTTP status. The webhook URL is a secret: only its scheme and host are
// printed. No database is opened and nothing is recorded.
// Exit statuses: 0 delivered, 1 not delivered, 2 no `alerts:`, its variable unset, or a project that fails check.
import type { Command } from 'commander';
import { systemClock } from '@/lib/engine/clock';
import { alertBody } from '@/lib/observe/alerts/alert-body';
import { sampleAlert } from '@/lib/observe/alerts/alert';
import { publicUrlOf } from '@/lib/observe/alerts/alerting';
import { sendWebhook, WEBHOOK_TRIES } from '@/lib/observe/alerts/webhook';
import { formatDiagnostic, loadProject } from '@/lib/project';
import { readWebhookUrl } from '@/lib/project/alerts-schema';
import { EXIT_USAGE } from './exit';
import { type CliIo, processIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';

export const EXIT_NOT_DELIVERED = 1;

export interface AlertsTestOptions {
  project?: string;
}

/** `aqven alerts test`: resolves with the exit status. */
export async function runAlertsTest(opts: AlertsTestOptions, io: CliIo = processIo, env: Record<string, string | undefined> = process.env): Promise<number> {
  const say = (text: string) => io.err(`aqven alerts test: ${text}\n`);
  const dir = resolveProjectDir(opts.project, env);
  const { project, diagnostics } = await loadProject(dir, { env });
  if (!project) {
    for (const d of diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
    say('the project fails aqven check: nothing was sent');
    return EXIT_USAGE;
  }
  const cfg = project.alerts;
  if (!cfg) {
    say(`${dir}/aqven.yaml has no alerts: section: nothing to test (add alerts: { webhook: { url_env: SLACK_WEBHOOK_URL } }; docs/monitoring.md, "Alerts")`);
    return EXIT_USAGE;
  }
  const read = readWebhookUrl(env, cfg.webhook.urlEnv);
  if (!read.ok) {
    say(`${read.problem}: export it with the webhook's URL (alerts.webhook.url_env in aqven.yaml names it)`);
    return EXIT_USAGE;
  }
  // the rest of the URL is the secret (Slack's carries its token)
  const where = `${read.url.protocol}//${read.url.host}`;
  const now = systemClock.now();
  const body = alertBody(sampleAlert(now), cfg.webhook.format, { project: project.name, firedAt: now, publicUrl: publicUrlOf(env) });
  const d = await sendWebhook(read.url, body, {
    clock: systemClock,
    onRetry: (failed, waitMs) => say(`try ${failed.tries} of ${WEBHOOK_TRIES}: ${failed.lastError}; trying again in ${(waitMs / 1000).toFixed(1)} s`),
  });
  const tries = `${d.tries} ${d.tries === 1 ? 'try' : 'tries'}`;
  if (d.ok) {
    io.out(`sent a sample alert (${cfg.webhook.format}) to ${where}: HTTP ${d.status} after ${tries}\n`);
    return 0;
  }
  say(`the sample alert (${cfg.webhook.format}) was not delivered to ${where} after ${tries}: ${d.lastError}`);
  return EXIT_NOT_DELIVERED;
}

export function registerAlerts(program: Command, io: CliIo = processIo): void {
  const alerts = program.command('alerts').description("alerts when a failure starts (aqven.yaml's alerts:)");
  alerts
    .command('test')
    .description("send a sample alert through the webhook aqven.yaml's alerts: names, and print the HTTP status")
    .option('--project <dir>', PROJECT_HELP)
    .action(async (opts: AlertsTestOptions) => io.exit(await runAlertsTest(opts, io)));
}
