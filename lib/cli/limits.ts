// `aqven limits MODEL` (DESIGN: CLI): finds the nesting depth, list length and enum size where a
// model stops getting a JSON shape right, through the engine (lib/limits/probe.ts), and prints per
// dimension the last level that held, the first that failed, the rates with their intervals, calls,
// tokens and cost. The budget is printed before the first call; a progress line on a TTY (stderr);
// Ctrl-C keeps what was measured (exit 130) and a later run the same day resumes it. Exit statuses:
// 0 every dimension's search ended, 1 a budget (or levels nothing could be judged at) stopped it,
// 2 bad usage (unknown model, bad numbers, a project failing check), 3 cannot record, 130 SIGINT.
import type { Command } from 'commander';
import { closeDatabase } from '@/db/client';
import { StorageError } from '@/db/storage-error';
import type { Clock } from '@/lib/engine/types';
import {
  beginLimitsProbe,
  checkModel,
  UnknownModelError,
  type DimensionReport,
  type LimitLevelReport,
  type LimitsProgress,
  type LimitsReport,
  type RateFigure,
} from '@/lib/limits/probe';
import { openSession, ProjectInvalidError, type Session } from '@/lib/flow/session';
import { simulateRequested } from '@/lib/flow/simulate';
import { formatDiagnostic } from '@/lib/project';
import { fmtCost } from '@/lib/shared/cost-text';
import { LIMIT_DEFAULTS } from '@/lib/shared/limits-types';
import { START_LIMITS_PROBE_FIELDS, startLimitsProbeSchema, type StartLimitsProbeField, type StartLimitsProbeInput } from '@/lib/contracts/limits-probe';
import { firstIssue, type Labels } from '@/lib/contracts/refusal';
import { lookUpCutOff } from './cut-off-lookup';
import { cliRunStart } from './cli-caller';
import { processIo, type CliIo } from './io';
import { PROJECT_HELP, resolveProjectDir } from './project-dir';
import { printable } from './printable';

export interface LimitsCliOptions {
  project?: string;
  simulate?: boolean;
  dimension?: string;
  trials?: string;
  maxCalls?: string;
  maxCost?: string;
  threshold?: string;
  maxTokens?: string;
  json?: boolean;
}

/** What a test hands in instead of the process's: the clock, a stop signal, where the progress line goes. */
export interface LimitsCliDeps {
  clock?: Clock;
  signal?: AbortSignal;
  /** the progress line (a TTY's stderr); none when absent */
  progress?: (text: string) => void;
  env?: Record<string, string | undefined>;
}

/** each option as the command names it, in a refusal's words */
const FLAGS: Labels<StartLimitsProbeField> = {
  model: 'the model',
  dimension: '--dimension',
  trials: '--trials',
  maxCalls: '--max-calls',
  maxCost: '--max-cost',
  threshold: '--threshold',
  maxTokens: '--max-tokens',
};

/** The flags as the start-a-limits-probe contract's input: a flag left out is its default. */
function probeInput(model: string, o: LimitsCliOptions): StartLimitsProbeInput {
  const d = LIMIT_DEFAULTS;
  return {
    model,
    dimension: o.dimension ?? 'all',
    trials: o.trials ?? String(d.trials),
    maxCalls: o.maxCalls ?? String(d.maxCalls),
    maxCost: o.maxCost ?? String(d.maxCostUsd),
    threshold: o.threshold,
    maxTokens: o.maxTokens,
  };
}

const pct = (f: RateFigure) => `${Math.round(f.value * 100)}%`;
const interval = (f: RateFigure) => `${Math.round(f.low * 100)}–${Math.round(f.high * 100)}%`;
const answered = (l: LimitLevelReport) => l.trials - l.truncated - (l.errors ?? 0);

function rateCell(k: number, n: number, f: RateFigure): string {
  return n === 0 ? '—' : `${k}/${n} ${pct(f)} (${interval(f)})`;
}

function verdict(d: DimensionReport, threshold: number): string {
  const held = d.lastHeld === null ? 'no level held' : `held up to ${d.lastHeld}`;
  const failed = d.firstFailed === null ? (d.status === 'complete' && d.lastHeld !== null ? ' (the top of the range: no level failed)' : '') : `, fails at ${d.firstFailed}`;
  const state = d.status === 'complete' ? '' : d.stoppedBy ? `  [partial: ${d.stoppedBy.replace('_', '-')}]` : '  [partial]';
  return `${held}${failed} (first-try valid ≥ ${Math.round(threshold * 100)}%)${state}`;
}

/** The report as a person reads it. */
export function formatLimitsReport(r: LimitsReport): string {
  const lines: string[] = [];
  const s = r.settings;
  lines.push(`${r.model} · measured ${r.measuredOn} · ${s.trials} trials per level, strict: false, one repair, max_tokens at least ${s.maxTokens}`);
  for (const d of r.dimensions) {
    lines.push('');
    lines.push(`${d.dimension.padEnd(5)}  ${verdict(d, s.threshold)}`);
    if (d.resumed > 0) lines.push(`       ${d.resumed} level${d.resumed === 1 ? '' : 's'} resumed from a run earlier today`);
    if (d.levels.length === 0) {
      lines.push('       nothing measured');
      continue;
    }
    const rows = [['level', 'first try', 'after one repair', ...(d.dimension === 'enum' ? ['right value'] : []), 'truncated', 'errors', 'calls']];
    for (const l of [...d.levels].sort((a, b) => a.level - b.level)) {
      const n = answered(l);
      rows.push([
        String(l.level),
        rateCell(l.firstTryValid, n, l.firstTry),
        rateCell(l.afterRepairValid, n, l.afterRepair),
        ...(d.dimension === 'enum' ? [l.correctRate ? rateCell(l.correct ?? 0, l.firstTryValid, l.correctRate) : '—'] : []),
        String(l.truncated),
        String(l.errors ?? 0),
        String(l.calls),
      ]);
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    for (const row of rows)
      lines.push(
        `       ${row
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd()}`,
      );
    lines.push(
      `       ${d.calls} calls, ${d.inputTokens.toLocaleString('en-US')} tokens in, ${d.outputTokens.toLocaleString('en-US')} out, ${fmtCost(d.costUsd)} (today, these settings)`,
    );
  }
  lines.push('');
  lines.push(
    `this run: ${r.calls} calls, ${r.inputTokens.toLocaleString('en-US')} tokens in, ${r.outputTokens.toLocaleString('en-US')} out, ${fmtCost(r.costUsd)} · run ${r.runId}`,
  );
  if (r.stopped) lines.push(`stopped: ${printable(r.stopped.message)}; run the same command again today to resume`);
  return `${lines.join('\n')}\n`;
}

function progressLine(p: LimitsProgress): string {
  const width = 20;
  const filled = Math.round((width * Math.min(p.calls, p.maxCalls)) / p.maxCalls);
  return `\r\x1b[K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.dimension} level ${p.level}: ${p.done}/${p.trials} trials · ${p.calls}/${p.maxCalls} calls · ${fmtCost(p.costUsd)} of ${fmtCost(p.maxCostUsd)}`;
}

/** `aqven limits MODEL …`; returns the exit status. */
export async function runLimits(model: string, opts: LimitsCliOptions, io: CliIo = processIo, deps: LimitsCliDeps = {}): Promise<number> {
  const say = (t: string) => io.err(`aqven limits: ${t}\n`);
  const parsed = startLimitsProbeSchema.safeParse(probeInput(model, opts));
  if (!parsed.success) {
    say(firstIssue(parsed.error, START_LIMITS_PROBE_FIELDS, FLAGS).message);
    return 2;
  }
  const env = deps.env ?? process.env;
  let session: Session | undefined;
  try {
    session = await openSession(resolveProjectDir(opts.project, env), { simulate: simulateRequested(opts.simulate), env });
    checkModel(session.project, parsed.data.model);
    const { author, refused } = await cliRunStart(session.db, env);
    if (refused) {
      say(refused.message);
      return 2;
    }
    // a missing API key, said before the first call (as `aqven run` does)
    for (const d of session.warnings) io.err(`${formatDiagnostic(d)}\n`);
    const p = parsed.data;
    say(
      `probing ${p.model}${session.simulated ? ' (simulated providers)' : ''}: ${p.dimensions.join(', ')}; ${p.trials} trials per level, threshold ${p.threshold}, max_tokens at least ${p.maxTokens}, strict: false, one repair\n` +
        `               budget: at most ${p.maxCalls} calls and ${fmtCost(p.maxCostUsd)} (--max-calls, --max-cost); Ctrl-C stops and keeps what was measured`,
    );
    const progress = deps.progress;
    const started = await beginLimitsProbe(
      {
        project: session.project,
        db: session.db,
        providers: session.providers,
        env: session.env,
        snapshotId: session.snapshotId,
        projectHash: session.projectHash,
        simulated: session.simulated,
      },
      { ...p, startedBy: author, signal: deps.signal, clock: deps.clock, onProgress: progress && ((e) => progress(progressLine(e))) },
    );
    const report = await started.done;
    progress?.('\r\x1b[K');
    // the usage of answers cut off mid-body, looked up now, as `aqven run` does (a simulated probe's from its own simulator)
    if (report.stopped?.reason !== 'interrupted') await lookUpCutOff('limits', session, report.runId, (line) => io.err(`${line}\n`));
    io.out(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatLimitsReport(report));
    if (report.stopped?.reason === 'interrupted') return 130;
    if (report.stopped?.reason === 'error') {
      say(printable(report.stopped.message));
      return 1;
    }
    return report.dimensions.every((d) => d.status === 'complete') ? 0 : 1;
  } catch (err) {
    if (err instanceof UnknownModelError) {
      say(`${err.message}`);
      return 2;
    }
    if (err instanceof ProjectInvalidError) {
      for (const d of err.diagnostics) if (d.severity === 'error') io.err(`${formatDiagnostic(d)}\n`);
      say(err.message);
      return 2;
    }
    if (err instanceof StorageError) {
      say(`${err.message}; no provider was called`);
      return 3;
    }
    throw err;
  } finally {
    await session?.close();
    if (session) await closeDatabase(session.db);
  }
}

export function registerLimits(program: Command, io: CliIo = processIo): void {
  program
    .command('limits')
    .description('find the nesting depth, list length and enum size where a model stops getting a JSON shape right')
    .argument('<model>', 'the model, as agent files name it: provider:model-id')
    .option('--project <dir>', PROJECT_HELP)
    .option('--simulate', 'route every provider to the in-process simulator (also AQVEN_SIMULATE=1)')
    .option('--dimension <which>', 'depth, list, enum or all', 'all')
    .option('--trials <n>', `trials per level (default ${LIMIT_DEFAULTS.trials})`)
    .option('--max-calls <n>', `stop before more model calls than this (default ${LIMIT_DEFAULTS.maxCalls})`)
    .option('--max-cost <usd>', `stop once this much is spent (default ${LIMIT_DEFAULTS.maxCostUsd})`)
    .option('--threshold <rate>', `a level holds when this share of first answers is valid (default ${LIMIT_DEFAULTS.threshold})`)
    .option('--max-tokens <n>', `max_tokens of every trial at least; a level whose answer may need more gets more (default ${LIMIT_DEFAULTS.maxTokens})`)
    .option('--json', 'print the report as JSON')
    .action(async (model: string, opts: LimitsCliOptions) => {
      const ac = new AbortController();
      const onSigint = () => ac.abort(new Error('stopped by SIGINT'));
      process.on('SIGINT', onSigint);
      try {
        // the progress line is the terminal's: drawn only when the command writes to the process
        const progress = io === processIo && process.stderr.isTTY ? (text: string) => void process.stderr.write(text) : undefined;
        io.exit(await runLimits(model, opts, io, { signal: ac.signal, progress }));
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}
