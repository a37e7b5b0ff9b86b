import { describe, expect, it } from 'vitest';
import type { NodeFacts } from '@/db/types';
import { layers, layoutFlow, nodeStates, type FlowShape } from './flow-graph';

const triage: FlowShape = {
  name: 'triage',
  nodes: [
    { id: 'classify', agent: 'classifier', needs: [], onFail: 'manual_review' },
    { id: 'draft', agent: 'writer', needs: ['classify'], onFail: null },
    { id: 'manual_review', agent: 'writer', needs: [], onFail: null },
  ],
};

const longAnswer: FlowShape = {
  name: 'long-answer',
  nodes: [
    { id: 'draft', agent: 'gpt', needs: [], onFail: null },
    { id: 'critique', agent: 'gpt', needs: ['draft'], onFail: null },
    { id: 'revise', agent: 'gpt', needs: ['draft', 'critique'], onFail: null },
    { id: 'final', agent: 'gpt', needs: ['critique', 'revise'], onFail: null },
  ],
};

function row(id: string, status: NodeFacts['status'], turn: number): NodeFacts {
  return { id, agent: 'a', turn, status, output: null, error: null, policy: null, attempts: [], startedAt: 0, finishedAt: 1 };
}

describe('layers and layout', () => {
  it('puts an on_fail target below its source, and a node below its deepest need', () => {
    expect([...layers(triage)]).toEqual([
      ['classify', 0],
      ['draft', 1],
      ['manual_review', 1],
    ]);
    expect([...layers(longAnswer)].map(([, d]) => d)).toEqual([0, 1, 2, 3]);
  });

  it('fits a phone: the widest flow of the showcase is narrower than 366 px, and edges that skip a layer bend around the nodes between', () => {
    for (const f of [triage, longAnswer]) expect(layoutFlow(f).width).toBeLessThanOrEqual(366);
    const l = layoutFlow(longAnswer);
    const skip = l.edges.find((e) => e.from === 'draft' && e.to === 'revise')!;
    const critique = l.nodes.find((n) => n.id === 'critique')!;
    // the label point of the bent edge lies outside the box of the node it passes
    expect(skip.labelX < critique.x || skip.labelX > critique.x + l.nodeW).toBe(true);
    expect(l.edges.filter((e) => e.kind === 'on_fail')).toHaveLength(0);
    expect(layoutFlow(triage).edges.map((e) => [e.from, e.to, e.kind])).toEqual([
      ['classify', 'manual_review', 'on_fail'],
      ['classify', 'draft', 'needs'],
    ]);
  });
});

describe('nodeStates', () => {
  it('names the route around a failed node, the skipped node and why', () => {
    const s = nodeStates({ status: 'succeeded', error: null, nodes: [row('classify', 'failed', 1), row('draft', 'skipped', 1), row('manual_review', 'succeeded', 2)] }, triage);
    expect(s.get('classify')).toMatchObject({ state: 'failed', routedTo: 'manual_review' });
    expect(s.get('draft')).toMatchObject({ state: 'skipped', note: 'skipped: needs classify, which failed' });
    expect(s.get('manual_review')).toMatchObject({ state: 'succeeded' });
  });

  it('does not call a failure routed when its route was already running in its turn (taken by an earlier failure): the run failed at it', () => {
    const shared: FlowShape = {
      name: 'shared',
      nodes: [
        { id: 'm', agent: 'a', needs: [], onFail: 'r' },
        { id: 'p', agent: 'a', needs: [], onFail: null },
        { id: 'n', agent: 'a', needs: ['p'], onFail: 'r' },
        { id: 'r', agent: 'a', needs: [], onFail: null },
      ],
    };
    const nodes = [row('m', 'failed', 1), row('p', 'succeeded', 1), row('n', 'failed', 2), row('r', 'succeeded', 2)];
    const s = nodeStates({ status: 'failed', error: { code: 'invalid_output', node: 'n', message: '', hint: null }, nodes }, shared);
    expect(s.get('m')).toMatchObject({ state: 'failed', routedTo: 'r' });
    expect(s.get('n')).toMatchObject({ state: 'failed', routedTo: null, note: 'failed' });
  });

  it('tells an on_fail target that was not needed from a node the run never reached', () => {
    const ok = nodeStates({ status: 'succeeded', error: null, nodes: [row('classify', 'succeeded', 1), row('draft', 'succeeded', 2), row('manual_review', 'skipped', 0)] }, triage);
    expect(ok.get('manual_review')).toMatchObject({ state: 'not-needed', note: 'not needed: runs only if classify fails' });
    const failed = nodeStates(
      { status: 'failed', error: { code: 'truncated', node: 'draft', message: '', hint: null }, nodes: [row('draft', 'failed', 1), row('critique', 'skipped', 1)] },
      longAnswer,
    );
    expect(failed.get('critique')).toMatchObject({ state: 'skipped' });
    // no row at all (the run stopped before skipping them)
    expect(failed.get('final')).toMatchObject({ state: 'not-reached', note: 'not reached: the run failed at draft before it' });
  });

  it('calls the nodes without a row pending while the run is live, saying what each waits for', () => {
    const s = nodeStates({ status: 'running', error: null, nodes: [{ ...row('classify', 'running', 1), finishedAt: null }] }, triage);
    expect(s.get('draft')).toMatchObject({ state: 'pending', note: 'pending: waits for classify' });
    expect(s.get('manual_review')).toMatchObject({ state: 'pending', note: 'pending: runs only if classify fails' });
  });
});
