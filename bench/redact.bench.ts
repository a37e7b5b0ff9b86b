// Redactor benchmark (DESIGN: "Redaction": "linear time on adversarial input, measured in a benchmark").
// Run: npm run bench:redact. Writes bench/results/redact.json.
//
// 1. Throughput on 10 MB of realistic, deterministic text (prose, JSON logs, stack traces, URLs,
//    timestamps, UUIDs, versions, sprinkled PII): warm-up, then the median of several runs.
// 2. Time on 1 MB adversarial inputs built to trigger super-linear behaviour in naive regexes.
import { loadavg } from 'node:os';
import { redact } from '../lib/redact/index';
import { writeResult } from './write-result';

const MB = 1 << 20;
const TARGET_MB_PER_S = 50;
const TARGET_ADVERSARIAL_MS = 100;

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
    'the', 'model', 'returned', 'a', 'response', 'with', 'tokens', 'and', 'retry', 'after', 'rate',
    'limit', 'user', 'request', 'context', 'window', 'output', 'schema', 'invalid', 'repair',
    'attempt', 'provider', 'fallback', 'policy', 'stream', 'delta', 'finished', 'because', 'of',
    'budget', 'cost', 'latency', 'is', 'not', 'to', 'in', 'for', 'on', 'we', 'should', 'can',
    'summary', 'customer', 'invoice', 'meeting', 'Thursday', 'version', 'deploy', 'error',
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

export function runRedactBench() {
  const text = realisticText(10 * MB);
  const sizeMb = text.length / MB;
  let sink = 0;
  for (let i = 0; i < 3; i++) sink += redact(text).length; // warm-up
  const runs = Array.from({ length: 9 }, () => time(() => (sink += redact(text).length)));
  const medianMs = median(runs.map((r) => r.wallMs));
  const medianCpuMs = median(runs.map((r) => r.cpuMs));
  const mbPerS = sizeMb / (medianMs / 1000);
  const placeholders: Record<string, number> = {};
  for (const m of redact(text).matchAll(/<(EMAIL|IBAN|CARD|PHONE|IP)>/g)) {
    placeholders[m[1]] = (placeholders[m[1]] ?? 0) + 1;
  }

  const adversarial = ADVERSARIAL.map(([name, input]) => {
    redact(input); // warm-up
    const ts = Array.from({ length: 5 }, () => time(() => (sink += redact(input).length)));
    const ms = median(ts.map((t) => t.wallMs));
    return { name, bytes: input.length, ms: +ms.toFixed(2), cpuMs: +median(ts.map((t) => t.cpuMs)).toFixed(2), pass: ms < TARGET_ADVERSARIAL_MS };
  });

  const result = {
    loadAverage: loadavg().map((l) => +l.toFixed(2)),
    realistic: {
      bytes: text.length,
      medianMs: +medianMs.toFixed(2),
      medianCpuMs: +medianCpuMs.toFixed(2),
      runsMs: runs.map((r) => +r.wallMs.toFixed(2)),
      mbPerS: +mbPerS.toFixed(1),
      mbPerCpuS: +(sizeMb / (medianCpuMs / 1000)).toFixed(1),
      pass: mbPerS >= TARGET_MB_PER_S,
      placeholders,
    },
    adversarial,
    targets: { realisticMbPerS: `>= ${TARGET_MB_PER_S}`, adversarialMs: `< ${TARGET_ADVERSARIAL_MS}` },
    checksum: sink, // keeps the timed calls observable
  };
  writeResult('redact', result);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = runRedactBench();
  const mb = r.realistic.bytes / MB;
  console.log(
    `realistic: ${mb.toFixed(1)} MB, median of ${r.realistic.runsMs.length} runs ${r.realistic.medianMs} ms → ` +
      `${r.realistic.mbPerS} MB/s (target ≥ ${TARGET_MB_PER_S}) ${r.realistic.pass ? 'ok' : 'MISSED'}; ` +
      `CPU ${r.realistic.medianCpuMs} ms → ${r.realistic.mbPerCpuS} MB/s; load average ${r.loadAverage.join(' ')}`,
  );
  console.log(`placeholders per pass: ${JSON.stringify(r.realistic.placeholders)}`);
  console.table(
    r.adversarial.map((a) => ({
      input: a.name,
      MB: (a.bytes / MB).toFixed(1),
      ms: a.ms,
      'cpu ms': a.cpuMs,
      [`< ${TARGET_ADVERSARIAL_MS} ms`]: a.pass ? 'yes' : 'NO',
    })),
  );
  console.log('wrote bench/results/redact.json');
  if (!r.realistic.pass || r.adversarial.some((a) => !a.pass)) process.exitCode = 1;
}
