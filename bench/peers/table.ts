// The peer benchmark's verdicts (each target from the same run: met or missed, never rounded up)
// and the markdown table it writes into the README between the markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { PROVIDER_DEFAULTS } from '@/lib/project/builtin-providers';
import { spread, type W1Figures, type W2Figures, type W3Figures } from './metrics';
import { W1_WINDOW_MS } from './workloads';

export const BEGIN = '<!-- peers:begin -->';
export const END = '<!-- peers:end -->';

export interface PeersResult {
  date: string;
  commit: string;
  node: string;
  quick: boolean;
  reps: number;
  /** W4's repetitions (more than W1–W3's: its calls/s ratio is the noisiest figure); absent in older results: `reps` */
  w4Repetitions?: number;
  sizes: { w1: number; w2: number; w3: number; w4: number };
  rttMs: number;
  /** per contender, one entry per repetition */
  w1: Record<string, W1Figures[]>;
  w2: Record<string, W2Figures[]>;
  w3: Record<string, W3Figures[]>;
  w4: Record<string, { callsPerSec: number; cpuMsPerCall: number }[]>;
  targets: Target[];
  durationS: number;
  /** seconds spent on W1–W3 (processes started, played) and on W4 */
  phasesS: { faults: number; w4: number };
  /** the machine's 1-minute load average when the bench started and when it ended (other work shares it) */
  load?: { start: number; end: number };
  cpus?: number;
}

export interface Target {
  workload: 'W1' | 'W2' | 'W3' | 'W4';
  target: string;
  /** AQVEN's figure as measured (median over repetitions, with the range) */
  value: string;
  met: boolean;
  /** a broken gate makes the bench exit non-zero */
  gate?: boolean;
}

export const PEERS = ['ai-generateObject', 'ai-generateText', 'openai-parse'] as const;
const AQVEN = 'aqven-recorded';
/** W1 only: a bare client doing only AQVEN's rate-limit rule (run.ts, W1_FLOOR) */
const FLOOR = 'rule-floor';
const LABEL: Record<string, string> = {
  fetch: 'bare `fetch` loop (the floor asked for)',
  'ai-generateObject': '`ai@6` generateObject',
  'ai-generateText': '`ai@6` generateText + Output.object',
  'openai-parse': '`openai@6` chat.completions.parse',
  aqven: 'AQVEN engine alone',
  'aqven-recorded': 'AQVEN, full recording',
};

/** "1.234 (1.100–1.300)"; one repetition shows the value alone. */
function fmt(xs: number[], digits: number): string {
  const s = spread(xs);
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : '∞');
  return xs.length === 1 || s.min === s.max ? f(s.median) : `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** Per repetition: AQVEN's figure over the best peer's (`best` picks the best of the peers). */
function ratios<T>(reps: Record<string, T[]>, pick: (f: T) => number, best: (xs: number[]) => number, peerPick: (f: T) => number = pick): number[] {
  const mine = reps[AQVEN] ?? [];
  return mine.map((f, i) => pick(f) / best(PEERS.map((p) => peerPick(reps[p]![i]!))));
}

/** W1: AQVEN's last call done at most this many times the rule's floor's, in the same repetition (issue 30) */
export const W1_FLOOR_TARGET = 1.01;
/** W4: full recording's calls/s at least this many times `openai@6`'s (issue 30: with write-ahead) */
export const W4_RECORDED_TARGET = 1.2;

/** Per repetition in which both ran: AQVEN's W1 last call done over the rule's floor's. */
export function w1ToFloor(r: Pick<PeersResult, 'w1'>): number[] {
  const floor = r.w1[FLOOR] ?? [];
  return (r.w1[AQVEN] ?? []).flatMap((f, i) => (floor[i] ? [f.lastDoneMs / floor[i].lastDoneMs] : []));
}

export function evaluateTargets(r: PeersResult): Target[] {
  const out: Target[] = [];
  const med = (xs: number[]) => spread(xs).median;
  const a1 = r.w1[AQVEN] ?? [];
  const violations = a1.map((f) => f.pauseViolations);
  out.push({
    workload: 'W1',
    target: 'at most one request per model per 429 pause beyond the first burst',
    value: `${Math.max(...violations)} extra request(s) in the worst repetition`,
    met: violations.every((v) => v === 0),
    gate: true,
  });
  const toOpt = a1.map((f) => f.ratioToOptimum);
  const floorOpt = (r.w1[FLOOR] ?? []).map((f) => f.ratioToOptimum);
  const toFloor = w1ToFloor(r);
  out.push({
    workload: 'W1',
    target: `last call done ≤ ${W1_FLOOR_TARGET}× the rule's floor's (a bare client doing only the rule, same repetition)`,
    value: toFloor.length
      ? `×${fmt(toFloor, 3)} the floor; measured against the optimum (window end + one round trip): AQVEN ×${fmt(toOpt, 3)}, the floor ×${fmt(floorOpt, 3)}`
      : `the floor was not measured; AQVEN ×${fmt(toOpt, 3)} the optimum`,
    met: toFloor.length > 0 && med(toFloor) <= W1_FLOOR_TARGET,
  });
  const toPeer = ratios(
    r.w1,
    (f) => f.lastDoneMs,
    (xs) => Math.min(...xs),
  );
  out.push({ workload: 'W1', target: "last call done ≤ the best peer's", value: `×${fmt(toPeer, 3)} the best peer`, met: med(toPeer) <= 1 });
  const bad = (r.w2[AQVEN] ?? []).map((f) => f.badAccepted);
  out.push({ workload: 'W2', target: '0 bad answers accepted', value: `${Math.max(...bad)} in the worst repetition`, met: bad.every((b) => b === 0), gate: true });
  const succ = ratios(
    r.w3,
    (f) => f.successes,
    (xs) => Math.max(...xs),
  );
  out.push({ workload: 'W3', target: 'successes ≥ the best peer', value: `×${fmt(succ, 3)} the best peer`, met: med(succ) >= 1 });
  const rps = ratios(
    r.w3,
    (f) => f.requestsPerSuccess,
    (xs) => Math.min(...xs),
  );
  out.push({ workload: 'W3', target: 'requests per success ≤ the best peer', value: `×${fmt(rps, 3)} the best peer`, met: med(rps) <= 1 });
  const a3 = r.w3[AQVEN] ?? [];
  out.push({
    workload: 'W3',
    target: 'every billed token visible in the run record',
    value: `${fmt(
      a3.map((f) => f.visibleShare * 100),
      1,
    )} % of the billed tokens after the usage lookup; ${fmt(
      a3.map((f) => f.usageUnknownAttempts),
      0,
    )} attempts still marked usage unknown for ${fmt(
      a3.map((f) => f.droppedAnswers),
      0,
    )} answers cut off`,
    met: a3.every((f) => f.visibleTokens >= f.billedTokens),
  });
  const wall = ratios(
    r.w3,
    (f) => f.wallMs,
    (xs) => Math.min(...xs),
  );
  const wallOpenai = a3.map((f, i) => f.wallMs / r.w3['openai-parse']![i]!.wallMs);
  out.push({ workload: 'W3', target: "wall time ≤ the best peer's", value: `×${fmt(wall, 2)} the best peer, ×${fmt(wallOpenai, 2)} \`openai@6\``, met: med(wall) <= 1 });
  // the seed page's pause (every other call of the model waits out a 429's retry-after) taken out: what is left is AQVEN's own cost
  const openRatio = ratios(
    r.w3,
    (f) => f.wallMs - f.pausedMs,
    (xs) => Math.min(...xs),
    (f) => f.wallMs,
  );
  out.push({
    workload: 'W3',
    target: "wall time outside the seed page's 429 pauses ≤ the best peer's wall time",
    value: `${fmt(
      a3.map((f) => (f.wallMs - f.pausedMs) / 1000),
      2,
    )} s of ${fmt(
      a3.map((f) => f.wallMs / 1000),
      2,
    )} s: ×${fmt(openRatio, 2)} the best peer's wall time`,
    met: openRatio.length > 0 && med(openRatio) <= 1,
  });
  const w4 = (kind: string, pick: (f: { callsPerSec: number; cpuMsPerCall: number }) => number) => (r.w4[kind] ?? []).map((f, i) => pick(f) / pick(r.w4['openai-parse']![i]!));
  const recRate = w4(AQVEN, (f) => f.callsPerSec);
  out.push({ workload: 'W4', target: `full recording ≥ ${W4_RECORDED_TARGET}× \`openai@6\` calls/s`, value: `×${fmt(recRate, 3)}`, met: med(recRate) >= W4_RECORDED_TARGET });
  const recCpu = w4(AQVEN, (f) => f.cpuMsPerCall);
  out.push({ workload: 'W4', target: "full recording ≤ `openai@6`'s CPU per call", value: `×${fmt(recCpu, 3)}`, met: med(recCpu) <= 1 });
  const engRate = w4('aqven', (f) => f.callsPerSec);
  out.push({ workload: 'W4', target: 'engine alone ≥ 1.2× `openai@6` calls/s', value: `×${fmt(engRate, 3)}`, met: med(engRate) >= 1.2 });
  return out;
}

function waitsLine(r: PeersResult): string {
  const reps = r.w3[AQVEN] ?? [];
  const keys = [...new Set(reps.flatMap((f) => Object.keys(f.waitsMs)))].sort();
  const label: Record<string, string> = {
    gate: 'at the gate before a first try (pauses after other calls’ 429s, the probe, a slot)',
    'after rate_limited': 'after a 429',
    'after server_error': 'after a 5xx',
    'after connection': 'after a dropped connection',
  };
  return (
    keys
      .map(
        (k) =>
          `${label[k] ?? k} ${fmt(
            reps.map((f) => f.waitsMs[k] ?? 0),
            0,
          )}`,
      )
      .join('; ') || 'none recorded'
  );
}

/** W1's floor, measured in the same run: what the rule alone costs, without AQVEN's work per call. */
function floorLine(r: PeersResult): string[] {
  const f = r.w1[FLOOR];
  if (!f?.length) return [];
  return [
    `W1's floor: a bare \`node:http\` client doing only AQVEN's rate-limit rule — every call waits out the model's pause, one probe after it, then the rest at once, at most ${PROVIDER_DEFAULTS.maxConcurrency} in flight; ` +
      `no validation, nothing recorded — had its first answer ok ${fmt(
        f.map((x) => x.firstOkMs),
        0,
      )} ms after the first request, sent its last request at ${fmt(
        f.map((x) => x.lastRequestMs),
        0,
      )} ms ` +
      `and finished at ${fmt(
        f.map((x) => x.lastDoneMs),
        0,
      )} ms: ×${fmt(
        f.map((x) => x.ratioToOptimum),
        3,
      )} the optimum, with ${fmt(
        f.map((x) => x.requests),
        0,
      )} requests.`,
    '',
  ];
}

const medianOf = <T>(reps: T[] | undefined, pick: (f: T) => number) => spread((reps ?? []).map(pick)).median;

export function renderTable(r: PeersResult): string {
  const cols = [...PEERS, AQVEN];
  const row = (label: string, cells: string[]) => `| ${label} | ${cells.join(' | ')} |`;
  const per = <T>(reps: Record<string, T[]>, pick: (f: T) => number, digits: number) => cols.map((c) => fmt((reps[c] ?? []).map(pick), digits));
  const a2 = r.w2[AQVEN]?.[0];
  const opt = r.w1[AQVEN]?.[0]?.optimumMs ?? 0;
  const lines = [
    BEGIN,
    `Measured ${r.date.slice(0, 10)} on commit \`${r.commit}\` (Node ${r.node}) by \`npm run bench:peers\`${r.quick ? ' --quick' : ''} in ${Math.round(r.durationS)} s: ` +
      `${r.reps} repetition${r.reps === 1 ? '' : 's'}${r.w4Repetitions && r.w4Repetitions !== r.reps ? ` (W4: ${r.w4Repetitions})` : ''}, each figure the median (min–max); ratios are taken within one repetition. ` +
      `The machine is a shared ${r.cpus ?? 2}-core one${r.load ? ` (1-minute load average ${r.load.start.toFixed(1)} at the start, ${r.load.end.toFixed(1)} at the end)` : ''}: figures are as measured, not smoothed.`,
    '',
    'One fake provider for every contender: the simulator playing keyed workloads (call N’s k-th answer is the same for everyone), ' +
      'OpenRouter’s chat.completions shape, non-streaming, no added latency, each contender in its own process. ' +
      'Peers use their documented retry option (`maxRetries: 2`) and nothing else; AQVEN runs a one-node flow with `output.retries: 2`, ' +
      'default policies, default `max_concurrency` (16) and full recording (SQLite), as `aqven run` does. ' +
      '**The peers have no concurrency cap.** W1 starts its 50 calls at once; W2 and W3 run 16 at a time; W4 4 at a time.',
    '',
    row(
      '',
      cols.map((c) => LABEL[c]!),
    ),
    row(
      '---',
      cols.map(() => '---'),
    ),
    row(
      'W1 requests (50 calls, 2 s of 429 `retry-after: 1`)',
      per(r.w1, (f) => f.requests, 0),
    ),
    row(
      'W1 429s received',
      per(r.w1, (f) => f.rateLimited, 0),
    ),
    row(
      'W1 requests during the 2 s window',
      per(r.w1, (f) => f.duringWindow, 0),
    ),
    row(
      'W1 first request answered ok, ms after the first request',
      per(r.w1, (f) => f.firstOkMs, 0),
    ),
    row(
      'W1 last request sent, ms',
      per(r.w1, (f) => f.lastRequestMs, 0),
    ),
    row(
      `W1 last call done, ms (optimum ${opt.toFixed(0)} ms)`,
      per(r.w1, (f) => f.lastDoneMs, 0),
    ),
    row(
      'W1 last call done, × optimum',
      per(r.w1, (f) => f.ratioToOptimum, 3),
    ),
    ...(r.w1[FLOOR]?.length
      ? [
          row(
            "W1 last call done, × the rule's floor's (same repetition)",
            cols.map((c) => fmt(w1ToFloor({ w1: { [AQVEN]: r.w1[c] ?? [], [FLOOR]: r.w1[FLOOR] } }), 3)),
          ),
        ]
      : []),
    row(
      'W1 failed calls',
      per(r.w1, (f) => f.failures, 0),
    ),
    row(
      'W1 requests beyond one per pause (after the first burst)',
      per(r.w1, (f) => f.pauseViolations, 0),
    ),
    row(
      `W2 bad answers accepted (of ${a2?.badServed ?? '?'} served in ${r.sizes.w2} calls)`,
      per(r.w2, (f) => f.badAccepted, 0),
    ),
    row(
      'W2 calls with a good object',
      per(r.w2, (f) => f.successes, 0),
    ),
    row(
      `W3 successes (of ${r.sizes.w3} calls)`,
      per(r.w3, (f) => f.successes, 0),
    ),
    row(
      'W3 wall time, s',
      per(r.w3, (f) => f.wallMs / 1000, 2),
    ),
    row(
      "W3 of it, the model paused after 429s (the seed page's pause: the union of their `retry-after: 0.2` windows), s",
      cols.map((c) =>
        c === AQVEN
          ? fmt(
              (r.w3[c] ?? []).map((f) => f.pausedMs / 1000),
              2,
            )
          : 'no pause',
      ),
    ),
    row(
      'W3 requests per success',
      per(r.w3, (f) => f.requestsPerSuccess, 3),
    ),
    row(
      'W3 tokens visible to the caller, % of billed (AQVEN: its run record, after the usage lookup)',
      per(r.w3, (f) => f.visibleShare * 100, 1),
    ),
    row(
      'W3 answers cut off mid-body (billed, usage never received)',
      per(r.w3, (f) => f.droppedAnswers, 0),
    ),
    '',
    ...floorLine(r),
  ];
  const w4cols = ['fetch', ...PEERS, 'aqven', AQVEN];
  lines.push(
    row(
      `W4 (${r.sizes.w4} calls, no faults, 4 at a time)`,
      w4cols.map((c) => LABEL[c]!),
    ),
    row(
      '---',
      w4cols.map(() => '---'),
    ),
    row(
      'calls/s',
      w4cols.map((c) =>
        fmt(
          (r.w4[c] ?? []).map((f) => f.callsPerSec),
          0,
        ),
      ),
    ),
    row(
      'CPU ms per call (the contender’s process)',
      w4cols.map((c) =>
        fmt(
          (r.w4[c] ?? []).map((f) => f.cpuMsPerCall),
          3,
        ),
      ),
    ),
    ...(medianOf(r.w4.aqven, (f) => f.cpuMsPerCall) < medianOf(r.w4.fetch, (f) => f.cpuMsPerCall)
      ? ['', 'The floor is a bare `fetch` (undici) loop sending the same request; a client on `node:http` costs less CPU per call, so a contender can go below it.']
      : []),
    '',
    row('Target (AQVEN, full recording unless said)', ['AQVEN', '']),
    row('---', ['---', '---']),
    ...r.targets.map((t) => row(`${t.workload}: ${t.target}`, [t.value, t.met ? 'met' : '**missed**'])),
    '',
    `Where AQVEN's W3 time goes (ms waited before its tries, summed over the ${r.sizes.w3} calls; median of the repetitions (min–max)): ${waitsLine(r)}. ` +
      `W1: the first request answered ok came ${fmt(
        (r.w1[AQVEN] ?? []).map((f) => f.firstOkMs - W1_WINDOW_MS),
        0,
      )} ms after the window's end and the last call was sent ${fmt(
        (r.w1[AQVEN] ?? []).map((f) => f.lastRequestMs - f.firstOkMs),
        0,
      )} ms after that.`,
    END,
  );
  return lines.join('\n');
}

/** Replaces what is between the markers in the README; the README without markers is left alone (false). */
export function writeReadmeTable(path: string, table: string): boolean {
  const text = readFileSync(path, 'utf8');
  const b = text.indexOf(BEGIN);
  const e = text.indexOf(END);
  if (b < 0 || e < b) {
    console.warn(`${path} has no ${BEGIN} … ${END} markers: the table was not written`);
    return false;
  }
  writeFileSync(path, text.slice(0, b) + table + text.slice(e + END.length));
  return true;
}
