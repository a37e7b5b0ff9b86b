// Redactor benchmark (DESIGN: "Redaction": "linear time on adversarial input, measured in a benchmark").
// Run: npm run bench:redact. Writes bench/results/redact.json.
//
// 1. Quality: per-kind recall and precision on the labelled corpus (bench/corpus, 4000 messages in
//    13 locales, fixed seed), BEFORE (the detectors as they were before the recall work, frozen in
//    bench/redact-baseline) and AFTER (lib/redact today), and how many negatives each touched.
// 2. Throughput on 10 MB of realistic, deterministic text (prose, JSON logs, stack traces, URLs,
//    timestamps, UUIDs, versions, sprinkled PII), before and after, runs interleaved so both see
//    the same machine load: warm-up, then the median of several runs.
// 3. Time on 1 MB adversarial inputs built to trigger super-linear behaviour in naive regexes or
//    in the context look-back.
//
// Speed targets live here only, never in tests. Wall-clock times on a shared machine swing with
// its load (recorded); CPU times are recorded next to them.
import { loadavg } from 'node:os';
import { detectPii, redact } from '../lib/redact/index';
import { CORPUS_MESSAGES, CORPUS_SEED, LOCALES, generatePiiCorpus } from './corpus/generate-pii-corpus';
import { type CorpusScore, KINDS, scoreCorpus } from './corpus/score';
import { detectPiiBefore, redactBefore } from './redact-baseline/detect-before';
import { writeResult } from './write-result';

const MB = 1 << 20;
const TARGET_MB_PER_S = 80;
const TARGET_ADVERSARIAL_MS = 50;
const TARGET_RECALL: Partial<Record<string, number>> = { card: 99, phone: 90 };
const TARGET_PRECISION = 95;

/** mulberry32: small, fast, deterministic. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function realisticText(size: number, seed = 42): string {
  const rnd = seeded(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const words = [
    'the',
    'model',
    'returned',
    'a',
    'response',
    'with',
    'tokens',
    'and',
    'retry',
    'after',
    'rate',
    'limit',
    'user',
    'request',
    'context',
    'window',
    'output',
    'schema',
    'invalid',
    'repair',
    'attempt',
    'provider',
    'fallback',
    'policy',
    'stream',
    'delta',
    'finished',
    'because',
    'of',
    'budget',
    'cost',
    'latency',
    'is',
    'not',
    'to',
    'in',
    'for',
    'on',
    'we',
    'should',
    'can',
    'summary',
    'customer',
    'invoice',
    'meeting',
    'Thursday',
    'version',
    'deploy',
    'error',
  ];
  const sentence = () => {
    const n = 6 + int(14);
    const ws = Array.from({ length: n }, () => pick(words));
    ws[0] = ws[0][0].toUpperCase() + ws[0].slice(1);
    return ws.join(' ') + pick(['.', '.', '.', '?', '!', ':', ', e.g. 3.5 times.']);
  };
  const iso = () =>
    `2024-${String(1 + int(12)).padStart(2, '0')}-${String(1 + int(28)).padStart(2, '0')}T${String(int(24)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}.${String(int(1000)).padStart(3, '0')}Z`;
  const version = () => `${int(20)}.${int(30)}.${int(100)}`;
  const pii = () =>
    pick([
      `anna.${int(1000)}@example.com`,
      'ops+alerts@mail.example.co.uk',
      `+44 20 7946 ${String(int(10000)).padStart(4, '0')}`,
      '(415) 555-0132',
      '06 12 34 56 78',
      'GB82 WEST 1234 5698 7654 32',
      'DE89370400440532013000',
      '4111 1111 1111 1111',
      '378282246310005',
      `10.${int(256)}.${int(256)}.${int(256)}`,
      '2001:db8::' + hex(4),
      'fe80::1%eth0',
    ]);
  const line = (): string => {
    switch (int(10)) {
      case 0:
      case 1:
      case 2:
        return `${sentence()} ${sentence()} ${sentence()}`;
      case 3:
      case 4:
        return JSON.stringify({
          ts: iso(),
          level: pick(['info', 'warn', 'error', 'debug']),
          msg: sentence(),
          request_id: uuid(),
          duration_ms: int(5000),
          epoch_ms: 1732886400000 + int(1e8),
          tokens: { prompt: int(4000), completion: int(1000) },
          model: `gpt-${pick(['4o', '4.1', '5'])}-${version()}`,
        });
      case 5:
        return [
          `Error: ${sentence()}`,
          `    at callNode (/app/lib/engine/call-node.ts:${int(400)}:${int(80)})`,
          `    at async runFlow (/app/lib/flow/run.ts:${int(400)}:${int(80)})`,
          `    at process.processTicksAndRejections (node:internal/process/task_queues:${int(100)}:${int(20)})`,
        ].join('\n');
      case 6:
        return `GET https://api.example.com/v1/runs/${uuid()}?page=${int(50)}&limit=${int(100)} HTTP/1.1 200 ${int(900)}ms node v${version()} sha ${hex(40)}`;
      case 7:
        return `${iso()} [${pick(['worker', 'gate', 'sim'])}-${int(16)}] ${sentence()} (${version()}) took ${(rnd() * 100).toFixed(2)}s; ratio 16:9; std::vector<int> used at 12:34:56`;
      case 8:
        return `| ${pick(words)} | ${int(100000)} | ${(rnd() * 1000).toFixed(3)} | ${iso().slice(0, 10)} | ${hex(8)} |`;
      default:
        return `${sentence()} Please reach me at ${pii()} or ${pii()}. ${sentence()}`;
    }
  };
  const parts: string[] = [];
  let len = 0;
  while (len < size) {
    const l = line();
    parts.push(l);
    len += l.length + 1;
  }
  return parts.join('\n').slice(0, size);
}

function fill(unit: string, size = MB): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

const ADVERSARIAL: [string, string][] = [
  ['aaaa… (letters)', fill('a')],
  ['a.a.a… (dotted words)', fill('a.')],
  ['aaaa@aaaa@… (at signs)', fill('aaaa@')],
  ['a@a.a@a.… (email chains)', fill('a@a.')],
  ['u@[IPv6:1:2:…] … (address literals)', fill('u@[IPv6:1:2:3:4:5:6:7:8:9:a:b:c:d:e:f:0:1:2:3:4:5:6:7:8:9:a:b:c:d:e:f] ')],
  ['1111… (one digit run)', fill('1')],
  ['1 1 1 … (spaced digits)', fill('1 ')],
  ['1-1-1-… (dashed digits)', fill('1-')],
  ['4111 4111 … (card-like groups)', fill('4111 ')],
  ['01 01 01 … (trunk-like groups)', fill('01 ')],
  ['::::… (colons)', fill(':')],
  ['ff:ff:ff… (hex groups)', fill('ff:')],
  ['1.1.1.1.1… (dotted digits)', fill('1.')],
  ['+1 +1 +1 … (plus signs)', fill('+1 ')],
  ['(1(1(1… (parentheses)', fill('(1')],
  ['GB82GB82… (iban-like)', fill('GB82')],
  ['ab12 ab12 … (iban starts)', fill('ab12 ')],
  // the context rule: phone and card words before numbers, negative words, runs of groups
  ['call 1 call 1 … (phone words)', fill('call 1 ')],
  ['phone 12 phone 12 … (words and pairs)', fill('phone 12 ')],
  ['card 4111 card 4111 … (card words)', fill('card 4111 ')],
  ['Order 0612345678 … (negative words)', fill('Order 0612345678 ')],
  ['12 12 12 … (one run of pairs)', fill('12 12 12 ')],
  ['(12) (12) … (area codes)', fill('(12) ')],
  ['my number my number … (weak words)', fill('my number ')],
  ['Mobile: 723 813 266 … (phones after words)', fill('Mobile: 723 813 266\n')],
];

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** Wall-clock and CPU time of one call. CPU time shows the cost when the machine is shared. */
function time(fn: () => void): Timing {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wallMs, cpuMs: (c.user + c.system) / 1000 };
}

function quality(score: CorpusScore) {
  return {
    kinds: score.kinds,
    negatives: score.negatives,
    missedSamples: { card: score.missed.card, phone: score.missed.phone },
    falsePositiveSamples: { card: score.falsePositives.card, phone: score.falsePositives.phone },
  };
}

export function runRedactBench() {
  // 1. quality on the labelled corpus
  const corpus = generatePiiCorpus();
  const before = scoreCorpus(corpus, detectPiiBefore);
  const after = scoreCorpus(corpus, detectPii);
  const qualityPass = KINDS.every((k) => after.kinds[k].precision >= TARGET_PRECISION && after.kinds[k].recall >= (TARGET_RECALL[k] ?? 0));

  // 2. throughput, before and after, interleaved
  const text = realisticText(10 * MB);
  const sizeMb = text.length / MB;
  let sink = 0;
  for (let i = 0; i < 3; i++) sink += redact(text).length + redactBefore(text).length; // warm-up
  const runs: Timing[] = [];
  const runsBefore: Timing[] = [];
  for (let i = 0; i < 9; i++) {
    runsBefore.push(time(() => (sink += redactBefore(text).length)));
    runs.push(time(() => (sink += redact(text).length)));
  }
  const throughput = (ts: Timing[]) => {
    const medianMs = median(ts.map((r) => r.wallMs));
    const medianCpuMs = median(ts.map((r) => r.cpuMs));
    return {
      medianMs: +medianMs.toFixed(2),
      medianCpuMs: +medianCpuMs.toFixed(2),
      runsMs: ts.map((r) => +r.wallMs.toFixed(2)),
      mbPerS: +(sizeMb / (medianMs / 1000)).toFixed(1),
      mbPerCpuS: +(sizeMb / (medianCpuMs / 1000)).toFixed(1),
    };
  };
  const now = throughput(runs);
  const was = throughput(runsBefore);
  const placeholders: Record<string, number> = {};
  for (const m of redact(text).matchAll(/<(EMAIL|IBAN|CARD|PHONE|IP)>/g)) {
    placeholders[m[1]] = (placeholders[m[1]] ?? 0) + 1;
  }

  // 3. adversarial inputs
  const adversarial = ADVERSARIAL.map(([name, input]) => {
    redact(input); // warm-up
    redactBefore(input);
    const ts: Timing[] = [];
    const tsBefore: Timing[] = [];
    for (let i = 0; i < 5; i++) {
      tsBefore.push(time(() => (sink += redactBefore(input).length)));
      ts.push(time(() => (sink += redact(input).length)));
    }
    const ms = median(ts.map((t) => t.wallMs));
    const cpuMs = median(ts.map((t) => t.cpuMs));
    return {
      name,
      bytes: input.length,
      ms: +ms.toFixed(2),
      cpuMs: +cpuMs.toFixed(2),
      beforeMs: +median(tsBefore.map((t) => t.wallMs)).toFixed(2),
      beforeCpuMs: +median(tsBefore.map((t) => t.cpuMs)).toFixed(2),
      // the target is on CPU time when the machine is shared: wall time then counts other work
      pass: Math.min(ms, cpuMs) < TARGET_ADVERSARIAL_MS,
    };
  });

  const result = {
    loadAverage: loadavg().map((l) => +l.toFixed(2)),
    quality: {
      corpus: {
        generator: 'bench/corpus/generate-pii-corpus.ts',
        seed: CORPUS_SEED,
        messages: CORPUS_MESSAGES,
        chars: after.chars,
        locales: LOCALES.map((l) => l.name),
      },
      before: quality(before),
      after: quality(after),
      pass: qualityPass,
    },
    realistic: {
      bytes: text.length,
      ...now,
      pass: Math.max(now.mbPerS, now.mbPerCpuS) >= TARGET_MB_PER_S,
      before: was,
      costPercent: +((100 * (now.medianCpuMs - was.medianCpuMs)) / was.medianCpuMs).toFixed(1),
      placeholders,
    },
    adversarial,
    targets: {
      recall: Object.fromEntries(Object.entries(TARGET_RECALL).map(([k, v]) => [k, `>= ${v}%`])),
      precision: `>= ${TARGET_PRECISION}% every kind`,
      realisticMbPerS: `>= ${TARGET_MB_PER_S}`,
      adversarialMs: `< ${TARGET_ADVERSARIAL_MS}`,
    },
    checksum: sink, // keeps the timed calls observable
  };
  writeResult('redact', result);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = runRedactBench();
  const q = r.quality;
  console.log(`corpus: ${q.corpus.messages} messages, ${q.corpus.chars} chars, ${q.corpus.locales.length} locales, seed ${q.corpus.seed}`);
  console.table(
    Object.fromEntries(
      KINDS.map((k) => {
        const b = q.before.kinds[k];
        const a = q.after.kinds[k];
        return [
          k,
          {
            labelled: a.labelled,
            'recall before': b.recall,
            'recall after': a.recall,
            'precision before': b.precision,
            'precision after': a.precision,
          },
        ];
      }),
    ),
  );
  console.log(
    'negatives touched (before → after): ' +
      Object.entries(q.after.negatives)
        .map(([k, v]) => `${k} ${q.before.negatives[k]?.hit ?? 0}→${v.hit}/${v.total}`)
        .join(', '),
  );
  console.log(`quality targets (card recall ≥ 99, phone recall ≥ 90, precision ≥ ${TARGET_PRECISION}): ${q.pass ? 'ok' : 'MISSED'}`);
  const mb = r.realistic.bytes / MB;
  const was = r.realistic.before;
  console.log(
    `realistic: ${mb.toFixed(1)} MB, median of ${r.realistic.runsMs.length} runs: before ${was.medianMs} ms → ` +
      `${was.mbPerS} MB/s (CPU ${was.mbPerCpuS}); after ${r.realistic.medianMs} ms → ${r.realistic.mbPerS} MB/s ` +
      `(CPU ${r.realistic.mbPerCpuS}); context costs ${r.realistic.costPercent}% CPU; target ≥ ${TARGET_MB_PER_S} ` +
      `${r.realistic.pass ? 'ok' : 'MISSED'}; load average ${r.loadAverage.join(' ')}`,
  );
  console.log(`placeholders per pass: ${JSON.stringify(r.realistic.placeholders)}`);
  console.table(
    r.adversarial.map((a) => ({
      input: a.name,
      MB: (a.bytes / MB).toFixed(1),
      ms: a.ms,
      'cpu ms': a.cpuMs,
      'before ms': a.beforeMs,
      [`< ${TARGET_ADVERSARIAL_MS} ms`]: a.pass ? 'yes' : 'NO',
    })),
  );
  console.log('wrote bench/results/redact.json');
  if (!q.pass || !r.realistic.pass || r.adversarial.some((a) => !a.pass)) process.exitCode = 1;
}
