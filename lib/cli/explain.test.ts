import { describe, expect, it } from 'vitest';
import { captureIo } from './io';
import { runCli } from './program';

async function explain(...args: string[]) {
  const io = captureIo();
  const ended = await runCli(['explain', ...args], io);
  return { code: ended ?? io.code ?? 0, out: io.stdout, err: io.stderr };
}

describe('aqven explain', () => {
  it('prints a code’s page: what it means, a file that triggers it, the fix (any case)', async () => {
    const r = await explain('e_outcome_fallback');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^## E_OUTCOME_FALLBACK\n\n\*\*an outcome policy is "fallback" but the agent has no fallback_models\.\*\*/);
    expect(r.out).toContain('on_error: "fallback"');
    expect(r.out).toContain('Fix: Add fallback_models');
  });

  it('prints the page of a code a failed run or node carries: what it means, the fix (any case)', async () => {
    const r = await explain('INVALID_OUTPUT');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^## invalid_output\n\n\*\*the answer did not fit the node’s output schema, and the repairs ran out\.\*\*/);
    expect(r.out).toContain('Fix: Raise output.retries');
    const budget = await explain('e_budget');
    expect(budget.code).toBe(0);
    expect(budget.out).toMatch(/^## E_BUDGET\n/);
  });

  it('a code with no page exits 2 and lists the codes that have one', async () => {
    const r = await explain('E_NOPE');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(
      /^aqven explain: no page for "E_NOPE"; codes with a page: E_FIELD, E_MODEL, .*W_SCHEMA_LIMIT(, [A-Z_]+)*, provider_error, refusal, .*E_BUDGET, interrupted(, [A-Za-z_]+)*\n$/,
    );
  });

  it('without a code it is a usage error', async () => {
    expect((await explain()).code).toBe(2);
  });
});
