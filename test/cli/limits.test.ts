// `aqven limits MODEL` as a user runs it, on a showcase copy with simulated providers (its declared
// limits, no chaos or latency): the budget is said before the first call, the report names the last
// level that held and the first that failed with the rates and their intervals, --json gives the
// same as data; a budget stop exits 1 with what was measured, Ctrl-C 130, bad usage 2.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@/lib/engine/clock';
import type { LimitsReport } from '@/lib/limits/probe';
import { copyShowcase } from '../helpers/showcase';
import { captureIo } from '@/lib/cli/io';
import { runLimits } from '@/lib/cli/limits';

const FLASH_LITE = 'openrouter:google/gemini-2.5-flash-lite';
const clock = { ...systemClock, now: () => Date.UTC(2026, 5, 15, 9) };
let dir: string;

beforeAll(() => {
  dir = copyShowcase();
  // the declared limits without chaos or latency: the same report on every run
  writeFileSync(
    join(dir, 'aqven.yaml'),
    'apiVersion: "aqven/v1"\nkind: "Project"\nname: "showcase"\nsimulate:\n  seed: 7\n  limits:\n    "google/gemini-2.5-flash-lite": { depth: 5, list: 40, enum: 30 }\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: Parameters<typeof runLimits>[1] & { model?: string }, extra: Parameters<typeof runLimits>[3] = {}) => {
  const io = captureIo();
  const { model, ...opts } = args;
  return runLimits(model ?? FLASH_LITE, { project: dir, simulate: true, ...opts }, io, { clock, env: {}, ...extra }).then((code) => ({ code, io }));
};

describe('aqven limits', () => {
  it('says the budget first, then per dimension the last level that held, the first that failed, the rates with intervals, calls and cost', async () => {
    const progress: string[] = [];
    const { code, io } = await run({ dimension: 'depth' }, { progress: (t) => progress.push(t) });
    expect(code).toBe(0);
    expect(io.stderr).toContain(`aqven limits: probing ${FLASH_LITE} (simulated providers): depth; 5 trials per level, threshold 0.9`);
    expect(io.stderr).toContain('budget: at most 300 calls and $1.00 (--max-calls, --max-cost)');
    expect(io.stdout).toMatch(/^openrouter:google\/gemini-2\.5-flash-lite · measured 2026-06-15 · 5 trials per level/);
    expect(io.stdout).toMatch(/^depth +held up to 5, fails at 6 \(first-try valid ≥ 90%\)$/m);
    expect(io.stdout).toMatch(/^ +level +first try +after one repair +truncated +errors +calls$/m);
    expect(io.stdout).toMatch(/^ +5 +5\/5 100% \(57–100%\) +5\/5 100% \(57–100%\) +0 +0 +5$/m);
    expect(io.stdout).toMatch(/^this run: \d+ calls, [\d,]+ tokens in, [\d,]+ out, \$[\d.]+ · run [0-9a-f-]{36}$/m);
    expect(progress.some((t) => /^\r\x1b\[K\[[#-]{20}\] depth level 8: \d\/5 trials · \d+\/300 calls/.test(t))).toBe(true);
    expect(progress.at(-1)).toBe('\r\x1b[K');
  });

  it('--json prints the report as data; a second run the same day resumes it and calls nothing', async () => {
    const { code, io } = await run({ dimension: 'depth', json: true });
    expect(code).toBe(0);
    const report = JSON.parse(io.stdout) as LimitsReport;
    expect(report.dimensions[0]).toMatchObject({ dimension: 'depth', status: 'complete', lastHeld: 5, firstFailed: 6, resumed: 4 });
    expect(report.calls).toBe(0);
    expect(report.dimensions[0]!.levels[0]!.firstTry).toEqual({ value: 1, low: expect.closeTo(0.566, 3) as number, high: 1 });
  });

  it('a call budget stops it with exit 1, printing what was measured and how to resume', async () => {
    const { code, io } = await run({ dimension: 'list', maxCalls: '12' });
    expect(code).toBe(1);
    expect(io.stdout).toMatch(/^list +held up to 8 \(first-try valid ≥ 90%\) {2}\[partial: max-calls\]$/m);
    expect(io.stdout).toMatch(/^stopped: stopped at the call budget \(--max-calls 12\).*; run the same command again today to resume$/m);
  });

  it('Ctrl-C keeps what was measured and exits 130', async () => {
    const ac = new AbortController();
    const { code, io } = await run(
      { dimension: 'enum' },
      { signal: ac.signal, progress: (t) => (t.includes('enum level 16') ? ac.abort(new Error('stopped by SIGINT')) : undefined) },
    );
    expect(code).toBe(130);
    expect(io.stdout).toMatch(/^enum +held up to 8 .*\[partial: interrupted\]$/m);
    expect(io.stdout).toContain('stopped: stopped by SIGINT; run the same command again today to resume');
  });

  it('refuses an unknown model, naming the models its agents use, and bad numbers, with exit 2', async () => {
    const unknown = await run({ model: 'openrouter:nope/x' });
    expect(unknown.code).toBe(2);
    expect(unknown.io.stderr).toMatch(
      /aqven limits: openrouter:nope\/x is not a model of this project; its agents use openrouter:google\/gemini-2\.5-flash-lite, openrouter:openai\/gpt-oss-20b\n$/,
    );
    for (const [args, message] of [
      [{ trials: '0' }, '--trials must be a whole number from 1 to 50, got "0"'],
      [{ maxCalls: '1' }, '--max-calls must be a whole number from 2 to 5,000, got "1"'],
      // the dashboard form's bounds hold here too (lib/contracts/limits-probe.ts)
      [{ trials: '51' }, '--trials must be a whole number from 1 to 50, got "51"'],
      [{ maxCalls: '5001' }, '--max-calls must be a whole number from 2 to 5,000, got "5001"'],
      [{ maxCost: '100.01' }, '--max-cost must be at most $100, got "100.01"'],
      [{ maxCost: 'lots' }, '--max-cost must be an amount in USD above 0, got "lots"'],
      [{ threshold: '1.5' }, '--threshold must be a rate above 0 and at most 1, e.g. 0.9, got "1.5"'],
      [{ dimension: 'width' }, '--dimension must be depth, list, enum or all, got "width"'],
    ] as const) {
      const r = await run(args);
      expect([r.code, r.io.stderr]).toEqual([2, `aqven limits: ${message}\n`]);
      expect(r.io.stdout).toBe('');
    }
  });
});
