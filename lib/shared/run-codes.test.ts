import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Cause, NodeResult } from '@/lib/engine/types';
import { INTERRUPTED_NODE_ERROR } from '@/db/interrupted-error';
import { explainHint, formatRunCodeReference, RUN_CODE_REFERENCE, RUN_CODES, runCodeReference, type RunCode } from './run-codes';
import { BUDGET_CODE } from './spend-budget';

describe('the run-time codes’ one table', () => {
  it('every code a failed run or node can carry has exactly one page, and no page names another code', () => {
    expect(RUN_CODE_REFERENCE.map((r) => r.code).sort()).toEqual([...RUN_CODES].sort());
    expect(new Set(RUN_CODES).size).toBe(RUN_CODES.length);
  });

  it('the engine’s causes, the budget’s refusal and a dead process’s node error are among them', () => {
    expectTypeOf<Cause>().toExtend<RunCode>();
    expectTypeOf<NonNullable<NodeResult['error']>['code']>().toExtend<RunCode>();
    for (const code of [BUDGET_CODE, INTERRUPTED_NODE_ERROR.code]) expect(runCodeReference(code), code).not.toBeNull();
  });

  it('every page says what the code means and the fix, under a `## CODE` heading', () => {
    for (const r of RUN_CODE_REFERENCE) {
      const page = formatRunCodeReference(r);
      expect(page.startsWith(`## ${r.code}\n\n**`), r.code).toBe(true);
      expect(r.means.length, r.code).toBeGreaterThan(40);
      expect(page, r.code).toContain('\nFix: ');
    }
  });
});

describe('explainHint', () => {
  it('ends a hint with the command that prints its code’s page, once', () => {
    const hint = explainHint('refusal', 'Set output.on_refusal to "retry" in agents/a.yaml');
    expect(hint).toBe('Set output.on_refusal to "retry" in agents/a.yaml — see: aqven explain refusal');
    expect(explainHint('refusal', hint)).toBe(hint);
    expect(explainHint('interrupted', '')).toBe('see: aqven explain interrupted');
    expect(INTERRUPTED_NODE_ERROR.hint).toMatch(/ — see: aqven explain interrupted$/);
  });
});
