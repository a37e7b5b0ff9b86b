// The loader's fuzzing (DESIGN: Limits), shared by the unit project's seeded sample
// (lib/project/fuzz.test.ts) and the load project's thousand files (lib/project/fuzz.load.test.ts):
// project files made from the showcase's by a small seeded mutator — wrong types, huge numbers,
// deep nesting, alias bombs, bytes that are not UTF-8, duplicate keys, tabs, names of
// Object.prototype members, truncation, random bytes — each loaded as part of a project. Every one
// must be answered without an exception, with every diagnostic positioned (file, line ≥ 1, col ≥ 1;
// whole-file ones at 1:1 with path []), at most LIMITS.diagnosticsPerFile errors listed per file,
// within a per-file budget of 2 s of CPU (generous: the worst files take about 0.3 s here; CPU time,
// not wall time, so a busy machine does not fail it — a pathological input still would). The seed is
// fixed: a failure names its iteration.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECK_CODES, LIMITS, loadProject, type Diagnostic } from '@/lib/project';

const SEED = 20_251_010;
const FILE_BUDGET_MS = 2_000;

/** mulberry32: small, fast, and the same sequence on every machine. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick };
}
type Rng = ReturnType<typeof rng>;

const VALUES = [
  '0',
  '-1',
  '3',
  '1e308',
  '-1e308',
  '99999999999999999999',
  '1.5',
  '0x1F',
  '0o17',
  '017',
  '.inf',
  '-.inf',
  '.nan',
  'true',
  'false',
  'null',
  '~',
  '""',
  '"x"',
  '[]',
  '{}',
  '[1, 2]',
  '{a: 1}',
  '"600h"',
  '"-1s"',
  '"1e9h"',
  '"0ms"',
  '"openrouter:"',
  '":x"',
  '"openrouter:gpt\\u0000"',
  '"openrouter:a\\u202Eb"',
  '"http://u:p@h/v1"',
  '"ftp://x"',
  'constructor',
  '__proto__',
  'toString',
  '"{{"',
  '"{{ nodes.x.output }}"',
  '"${UNSET_VAR}"',
  '*nope',
  '&a 1',
  '!!binary aGk=',
  '!custom 1',
  '|\n  block',
  '>-\n  folded',
  "'single'",
  '"\\x00\\x85"',
  '2024-01-01',
  '1:30',
  '0b101',
  '+12',
  '1_000',
];

const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];

function lines(text: string): string[] {
  return text.split('\n');
}

/** One mutation of the text (the bytes step may return a Buffer). */
function mutate(r: Rng, text: string): string | Buffer {
  const ls = lines(text);
  const at = r.int(ls.length);
  const line = ls[at] ?? '';
  const indent = /^ */.exec(line)![0];
  switch (r.int(20)) {
    case 0: // a value of the wrong type (or a huge number, a hex integer, …)
    case 1: {
      const m = /^(\s*-?\s*[^:#]+:)\s*(.*)$/.exec(line);
      if (m) ls[at] = `${m[1]} ${r.pick(VALUES)}`;
      else ls[at] = `${indent}- ${r.pick(VALUES)}`;
      return ls.join('\n');
    }
    case 2: {
      // deep nesting, mostly around the limit, sometimes far past it
      const depth = r.pick([LIMITS.depth - 3, LIMITS.depth, LIMITS.depth + 3, 500, 5_000, 20_000]);
      const flow = r.next() < 0.5;
      const value = flow ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{a: '.repeat(depth)}1${'}'.repeat(depth)}`;
      ls.splice(at, 0, `${indent}deep: ${value}`);
      return ls.join('\n');
    }
    case 3: {
      // alias bombs, unresolved and circular aliases, many aliases
      const bombs = [
        () => ['lol0: &l0 [a, a, a, a, a, a, a, a, a]', ...Array.from({ length: 9 }, (_, i) => `lol${i + 1}: &l${i + 1} [${Array(9).fill(`*l${i}`).join(', ')}]`)],
        () => ['x: *nope'],
        () => ['x: &c [1, *c]'],
        () => [
          'a: &m v',
          `b: [${Array(r.pick([50, 101, 500]))
            .fill('*m')
            .join(', ')}]`,
        ],
        () => ['&k key: 1', 'other: *k'],
      ];
      ls.splice(
        at,
        0,
        ...r
          .pick(bombs)()
          .map((l) => indent + l),
      );
      return ls.join('\n');
    }
    case 4: {
      // bytes that are not UTF-8
      const bytes = Buffer.from(text, 'utf8');
      const i = r.int(bytes.length + 1);
      const bad = Buffer.from([r.pick([0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf5, 0xff, 0xfe])]);
      return Buffer.concat([bytes.subarray(0, i), bad, bytes.subarray(i)]);
    }
    case 5: // duplicate keys
      ls.splice(at, 0, line);
      return ls.join('\n');
    case 6: // tabs
      ls[at] = line.replace(/^ +/, (s) => '\t'.repeat(Math.max(1, s.length / 2)));
      return ls.join('\n');
    case 7: // delete a line
      ls.splice(at, 1);
      return ls.join('\n');
    case 8: {
      // random characters, YAML syntax among them
      const chars = [
        '{',
        '}',
        '[',
        ']',
        ':',
        '- ',
        '&',
        '*',
        '!',
        '%',
        '|',
        '>',
        '"',
        "'",
        '#',
        '\t',
        '\u0000',
        '\u0085',
        '\u202e',
        '\ufeff',
        '\r',
        '\n',
        '{{',
        '}}',
        '${',
        '?',
        ',',
        '@',
        '`',
      ];
      const i = r.int(text.length + 1);
      return text.slice(0, i) + Array.from({ length: 1 + r.int(4) }, () => r.pick(chars)).join('') + text.slice(i);
    }
    case 9: // truncated
      return text.slice(0, r.int(text.length + 1));
    case 10: {
      // many keys
      const n = r.pick([200, 2_000, 20_000]);
      const flow = r.next() < 0.5;
      ls.splice(
        at,
        0,
        flow
          ? `${indent}many: {${Array.from({ length: n }, (_, i) => `k${i % (n / 2)}: ${i}`).join(', ')}}`
          : `${indent}many:\n${Array.from({ length: n }, (_, i) => `${indent}  k${i}: ${i}`).join('\n')}`,
      );
      return ls.join('\n');
    }
    case 11: // a name of an Object.prototype member where a name or id goes
      return text.replace(/\b(classify|draft|manual_review|answer|classifier|writer|gpt|openrouter|ticket|question)\b/g, (w) => (r.next() < 0.5 ? r.pick(NAMES) : w));
    case 12: {
      // template bombs in a prompt or elsewhere
      const n = r.pick([10, 1_000, 50_000]);
      ls.splice(at, 0, `${indent}prompt: "${r.pick(['{{', '{{ x }}', '}}', '{{ nodes.', '{{ input.__proto__ }}']).repeat(n)}"`);
      return ls.join('\n');
    }
    case 13: // a needs cycle or an on_fail back to a node that needs it
      return text
        .replace(/needs: \[(\w+)\]/, (_m, n: string) => r.pick([`needs: [${n}, draft, classify]`, `on_fail: "${n}"`, 'needs: [draft]']))
        .replace(/on_fail: "(\w+)"/, () => `on_fail: "${r.pick(['classify', 'draft', 'nowhere', 'constructor'])}"`);
    case 14: // a big file (sometimes over the size limit)
      return `${text}\n# ${'x'.repeat(r.pick([1_000, 60_000, LIMITS.fileBytes + 10]))}\n`;
    case 15: // a second document, a directive, a BOM
      return r.pick([`${text}\n---\nkind: "Agent"\n`, `%YAML 1.1\n---\n${text}`, `\ufeff${text}`, `%TAG ! tag:x,2000:\n---\n${text}`]);
    case 16: // swap two lines
      if (ls.length > 1) {
        const b = r.int(ls.length);
        [ls[at], ls[b]] = [ls[b], ls[at]];
      }
      return ls.join('\n');
    case 17: // shift indentation
      ls[at] = r.next() < 0.5 ? ` ${line}` : line.replace(/^ /, '');
      return ls.join('\n');
    case 18: // a key where it does not belong, or an unknown one
      ls.splice(at, 0, `${indent}${r.pick(['retires', 'nodes', 'model', 'kind', '__proto__', 'constructor', '"a\\u001bb"', '? [a]', '1', 'null'])}: ${r.pick(VALUES)}`);
      return ls.join('\n');
    default: // several of the above
      return text;
  }
}

/** Why a diagnostic is not well-formed, or null. */
function malformed(d: Diagnostic, files: ReadonlySet<string>): string | null {
  if (!files.has(d.file)) return `unknown file ${d.file}`;
  if (!Number.isInteger(d.line) || d.line < 1 || !Number.isInteger(d.col) || d.col < 1) return `position ${d.line}:${d.col}`;
  if (d.severity !== (d.code.startsWith('W_') ? 'warning' : 'error')) return `severity ${d.severity} for ${d.code}`;
  if (!CHECK_CODES.includes(d.code)) return `code ${d.code}`;
  if (typeof d.message !== 'string' || d.message === '' || d.message.includes('\n') || d.message.length > LIMITS.messageChars) return 'message';
  if (typeof d.hint !== 'string' || d.hint === '' || d.hint.includes('\n') || d.hint.length > LIMITS.messageChars) return 'hint';
  if (!Array.isArray(d.path) || !d.path.every((s) => typeof s === 'string' || typeof s === 'number')) return 'path';
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(d.message + d.hint)) return 'unprintable text in the message or hint';
  if (d.code === 'E_MORE' && (d.line !== 1 || d.col !== 1 || d.path.length !== 0 || !(d.omitted! > 0))) return 'E_MORE must be about the whole file';
  return null;
}

/**
 * The fuzz test: `files` mutated files of the fixed seed (the first `files` of its sequence), each
 * loaded as part of a project; `timeoutMs` for the whole.
 */
export function describeLoaderFuzz(fileCount: number, timeoutMs: number): void {
  describe('the loader under fuzzing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aqven-fuzz-'));
    cpSync(join(process.cwd(), 'showcase'), dir, { recursive: true, filter: (src) => !src.includes('.aqven') });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const files = ['aqven.yaml', ...['providers', 'agents', 'flows'].flatMap((sub) => readdirSync(join(dir, sub)).map((f) => `${sub}/${f}`))];
    const originals = new Map(files.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

    it(
      `answers ${fileCount} mutated files with positioned diagnostics, each within ${FILE_BUDGET_MS} ms of CPU`,
      async () => {
        const r = rng(SEED);
        const known = new Set(files);
        let slowest = { ms: 0, i: -1 };
        let clean = 0;
        const codes = new Set<string>();
        for (let i = 0; i < fileCount; i++) {
          const file = r.pick(files);
          let text: string | Buffer = originals.get(file)!;
          for (let k = 1 + r.int(3); k > 0 && typeof text === 'string'; k--) text = mutate(r, text);
          writeFileSync(join(dir, file), text);
          const where = `iteration ${i} (seed ${SEED}), ${file}: ${JSON.stringify(String(text).slice(0, 300))}`;
          const start = process.cpuUsage();
          let result: Awaited<ReturnType<typeof loadProject>>;
          try {
            result = await loadProject(dir, { env: { OPENROUTER_API_KEY: 'sk-test' } });
          } catch (err) {
            throw new Error(`loadProject threw on ${where}: ${err instanceof Error ? err.stack : String(err)}`);
          }
          const used = process.cpuUsage(start);
          const ms = (used.user + used.system) / 1000;
          if (ms > slowest.ms) slowest = { ms, i };
          if (process.env.FUZZ_LOG && ms > 100) console.log(ms.toFixed(0), where.slice(0, 120), String(text).length);
          expect(ms, `slow: ${where}`).toBeLessThan(FILE_BUDGET_MS);
          const { project, diagnostics } = result;
          for (const d of diagnostics) {
            codes.add(d.code);
            const bad = malformed(d, known);
            if (bad) throw new Error(`malformed diagnostic (${bad}) on ${where}: ${JSON.stringify(d)}`);
          }
          const errors = diagnostics.filter((d) => d.severity === 'error');
          for (const f of known) expect(errors.filter((d) => d.file === f && d.code !== 'E_MORE').length, where).toBeLessThanOrEqual(LIMITS.diagnosticsPerFile);
          expect(project === null, where).toBe(errors.length > 0);
          if (errors.length === 0) clean++;
          writeFileSync(join(dir, file), originals.get(file)!);
        }
        // the mutator reaches the checks it is meant to: the limits, counting and the usual codes
        for (const code of ['E_FIELD', 'E_LIMIT', 'E_MORE', 'E_MODEL', 'E_TEMPLATE', 'E_FLOW_NEEDS']) expect(codes, [...codes].join(' ')).toContain(code);
        expect(clean).toBeGreaterThan(0);
        expect(slowest.ms).toBeLessThan(FILE_BUDGET_MS);
      },
      timeoutMs,
    );
  });
}
