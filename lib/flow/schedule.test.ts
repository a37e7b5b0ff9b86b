// The run loop's schedule over plain facts (DESIGN: flows/NAME.yaml, Storage "Leases"): what is
// skipped, which on_fail routes are taken, which failure ends the run, what runs next — the same
// reading for a live run and for one taken over from its stored facts.
import { describe, expect, it } from 'vitest';
import { BUDGET_CODE } from '@/lib/shared/spend-budget';
import { blocked, nextStep, resumedTurn, routing, unreached, type FlowPlan, type NodeFact } from './schedule';

type Node = { needs?: string[]; onFail?: string };
const plan = (nodes: Record<string, Node>, extra: Partial<FlowPlan> = {}): FlowPlan => ({
  ids: Object.keys(nodes),
  nodes: Object.fromEntries(Object.entries(nodes).map(([id, n]) => [id, { needs: n.needs ?? [], ...(n.onFail && { onFail: n.onFail }) }])),
  given: new Set(),
  ...extra,
});
const fact = (id: string, status: NodeFact['status'], turn: number, code?: string): NodeFact => ({
  id,
  status,
  turn,
  error: status === 'failed' ? { code: code ?? 'invalid_output' } : null,
});

// the README's triage: classify routes to manual_review when it fails; draft needs classify
const triage = plan({ classify: { onFail: 'manual_review' }, draft: { needs: ['classify'] }, manual_review: {} });

describe('nextStep', () => {
  it('starts with the nodes that need nothing, never an on_fail target', () => {
    expect(nextStep(triage, [])).toEqual({ skip: [], routed: [], failed: null, ready: ['classify'] });
  });

  it('runs a node once what it needs succeeded; the on_fail target stays unreached', () => {
    expect(nextStep(triage, [fact('classify', 'succeeded', 1)])).toEqual({ skip: [], routed: [], failed: null, ready: ['draft'] });
    expect(nextStep(triage, [fact('classify', 'succeeded', 1), fact('draft', 'succeeded', 2)]).ready).toEqual([]);
  });

  it('routes a failed node through its on_fail and skips what needs it', () => {
    expect(nextStep(triage, [fact('classify', 'failed', 1)])).toEqual({
      skip: [{ id: 'draft', reason: 'needs classify, which failed' }],
      routed: ['manual_review'],
      failed: null,
      ready: ['manual_review'],
    });
  });

  it('a failure with no on_fail fails the run: nothing more is ready, what needs it is still skipped', () => {
    const p = plan({ a: {}, b: { needs: ['a'] }, c: { needs: ['b'] }, d: {} });
    expect(nextStep(p, [fact('a', 'failed', 1), fact('d', 'succeeded', 1)])).toEqual({
      skip: [
        { id: 'b', reason: 'needs a, which failed' },
        { id: 'c', reason: 'needs b, which was skipped' },
      ],
      routed: [],
      failed: 'a',
      ready: [],
    });
  });

  it('fan-in: a node that needs two waits for both, and is skipped when either fails', () => {
    const p = plan({ a: {}, b: {}, join: { needs: ['a', 'b'] } });
    expect(nextStep(p, []).ready).toEqual(['a', 'b']);
    expect(nextStep(p, [fact('a', 'succeeded', 1), fact('b', 'running', 1)]).ready).toEqual([]);
    expect(nextStep(p, [fact('a', 'succeeded', 1), fact('b', 'succeeded', 1)]).ready).toEqual(['join']);
    expect(nextStep(p, [fact('a', 'succeeded', 1), fact('b', 'failed', 1)])).toMatchObject({ skip: [{ id: 'join', reason: 'needs b, which failed' }], failed: 'b' });
  });

  it("a spent budget is not routed: the route's attempts would be refused too", () => {
    expect(nextStep(triage, [fact('classify', 'failed', 1, BUDGET_CODE)])).toMatchObject({ routed: [], failed: 'classify', ready: [] });
  });

  it("a replay runs its one node: its needs' outputs are given, and its on_fail is not followed", () => {
    const replay = { ...triage, ids: ['draft'], given: new Set(['classify']) };
    expect(nextStep(replay, []).ready).toEqual(['draft']);
    const p = plan({ a: { onFail: 'r' }, r: {} });
    expect(nextStep({ ...p, ids: ['a'] }, [fact('a', 'failed', 1)])).toMatchObject({ routed: [], failed: 'a' });
  });
});

describe('routing: a failed node is routed unless its route had been reached when it failed', () => {
  // m fails in turn 1 and routes to r; n (after p) fails in turn 2, the turn r runs in
  const p = plan({ m: { onFail: 'r' }, p: {}, n: { needs: ['p'], onFail: 'r' }, r: {} });

  it('two failures of one turn share their route; a failure with no route beside a routed one fails the run', () => {
    expect(routing(p, [fact('m', 'failed', 1), fact('p', 'failed', 1)])).toEqual({ routed: ['r'], failed: 'p' });
    const q = plan({ m: { onFail: 'r' }, n: { onFail: 'r' }, r: {} });
    expect(routing(q, [fact('m', 'failed', 1), fact('n', 'failed', 1)])).toEqual({ routed: ['r'], failed: null });
  });

  it('a failure in the turn its route already runs in (another failure took it) fails the run', () => {
    const facts = [fact('m', 'failed', 1), fact('p', 'succeeded', 1), fact('n', 'failed', 2), fact('r', 'running', 2)];
    expect(routing(p, facts)).toEqual({ routed: ['r'], failed: 'n' });
    expect(routing(p, [...facts.slice(0, 3), fact('r', 'succeeded', 2)])).toEqual({ routed: ['r'], failed: 'n' });
  });

  it('a route skipped a turn before the failure is not taken; one skipped in the failure turn (after it) is', () => {
    const q = plan({ x: {}, a: { needs: ['x'], onFail: 'r' }, r: { needs: ['x'] }, y: {}, b: { needs: ['y'], onFail: 'r' } });
    expect(routing(q, [fact('x', 'failed', 1), fact('r', 'skipped', 1), fact('y', 'succeeded', 1), fact('b', 'failed', 2)])).toEqual({ routed: [], failed: 'x' });
    expect(routing(q, [fact('y', 'succeeded', 1), fact('b', 'failed', 2), fact('r', 'skipped', 2)]).routed).toEqual(['r']);
  });

  it('of two failures none routes around, the earlier turn fails the run, then the first in the file', () => {
    const q = plan({ a: {}, b: {}, c: { needs: ['b'] } });
    expect(routing(q, [fact('c', 'failed', 2), fact('a', 'failed', 2), fact('b', 'succeeded', 1)]).failed).toBe('a');
    expect(routing(q, [fact('a', 'failed', 3), fact('c', 'failed', 2)]).failed).toBe('c');
  });
});

describe('a taken-over run, from partial facts', () => {
  it("restarts its running nodes in their turn, with the same turn's nodes whose rows were never written", () => {
    const p = plan({ a: {}, b: {}, c: { needs: ['a'] }, d: { needs: ['a'] }, e: { needs: ['c'] } });
    // turn 2: c was running when the worker died, d's row was never written
    const facts = [fact('a', 'succeeded', 1), fact('b', 'succeeded', 1), fact('c', 'running', 2)];
    const step = nextStep(p, facts);
    expect(step.ready).toEqual(['d']);
    expect(resumedTurn(p, facts, 2, step.ready)).toEqual(['c', 'd']);
  });

  it('does not start an on_fail route taken in the resumed turn: it runs in the next', () => {
    const p = plan({ a: { onFail: 'r' }, b: {}, r: {} });
    const facts = [fact('a', 'failed', 1), fact('b', 'running', 1)];
    const step = nextStep(p, facts);
    expect(step).toMatchObject({ routed: ['r'], ready: ['r'] });
    expect(resumedTurn(p, facts, 1, step.ready)).toEqual(['b']);
  });

  it('reads blocked nodes and unreached ones the same way', () => {
    expect(blocked(triage, [fact('classify', 'failed', 1)])).toEqual([{ id: 'draft', reason: 'needs classify, which failed' }]);
    expect(unreached(triage, [fact('classify', 'succeeded', 1), fact('draft', 'succeeded', 2)])).toEqual([{ id: 'manual_review', reason: 'its on_fail source did not fail' }]);
    const p = plan({ a: {}, b: {}, c: { needs: ['b'] } });
    expect(unreached(p, [fact('a', 'failed', 1), fact('b', 'succeeded', 1)])).toEqual([{ id: 'c', reason: 'the run stopped' }]);
  });
});
