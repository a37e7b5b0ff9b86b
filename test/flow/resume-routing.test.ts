// A run taken over from its stored facts routes its failed nodes as the live run loop does (DESIGN:
// Storage, "Take-over and resume": on_fail routes read off the stored facts by the same schedule): one rule,
// lib/flow/schedule.ts. Until issue 29 the take-over restated it, and a failure in the turn its
// route already ran in (another node's failure had taken it), or a replay's failed node, let the
// run end `succeeded`. Facts only: every node has ended, so no provider is called.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NodeFacts, RunFacts } from '@/db/types';
import { beginRun } from '@/lib/flow/run-flow';
import { loadProject, type FlowDef, type Project } from '@/lib/project';

async function showcase(): Promise<Project> {
  const { project } = await loadProject(join(process.cwd(), 'showcase'), { env: {} });
  return project!;
}

const node = (id: string, status: NodeFacts['status'], turn: number, output: unknown = null): NodeFacts => ({
  id,
  agent: 'writer',
  turn,
  status,
  output,
  error: status === 'failed' ? { code: 'invalid_output', message: `${id} gave no valid output`, hint: 'h' } : null,
  policy: null,
  attempts: [],
  startedAt: 1_000 + turn,
  finishedAt: 2_000 + turn,
});

function stored(flow: string, turns: number, nodes: NodeFacts[]): { facts: RunFacts; nodeRunIds: Map<string, string> } {
  const facts: RunFacts = { id: 'run-1', flow, status: 'running', input: { ticket: 't' }, output: null, error: null, turns, startedAt: 1_000, finishedAt: null, nodes };
  return { facts, nodeRunIds: new Map(nodes.map((n) => [n.id, `row-${n.id}`])) };
}

describe('a taken-over run routes its failed nodes as the run loop did', () => {
  it('a node that failed in the turn its on_fail route was already running in (taken by an earlier failure) fails the run', async () => {
    const project = await showcase();
    const def = (needs: string[], onFail?: string) => ({ agent: 'writer', prompt: 'p', needs, stream: false, ...(onFail && { onFail }) });
    const flow: FlowDef = {
      name: 'routes',
      file: 'flows/routes.yaml',
      inputSchema: { type: 'object' },
      nodes: { m: { id: 'm', ...def([], 'r') }, p: { id: 'p', ...def([]) }, n: { id: 'n', ...def(['p'], 'r') }, r: { id: 'r', ...def([]) } },
    };
    const withFlow = { ...project, flows: { ...project.flows, routes: flow } };
    // turn 1: m failed (routed to r), p succeeded; turn 2: n failed while r ran; the owner died before the run's end
    const resume = stored('routes', 2, [node('m', 'failed', 1), node('p', 'succeeded', 1, 'P'), node('n', 'failed', 2), node('r', 'succeeded', 2, 'R')]);
    const { done } = await beginRun({ project: withFlow, flow: 'routes', input: resume.facts.input, runId: 'run-1', resume });
    const record = await done;
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'invalid_output', node: 'n' });
  });

  it("a replay's failed node fails the replay: its on_fail route is not followed", async () => {
    const project = await showcase();
    const resume = stored('triage', 1, [node('classify', 'failed', 1)]);
    const only = { node: 'classify', outputs: {} };
    const { done } = await beginRun({ project, flow: 'triage', input: resume.facts.input, runId: 'run-1', resume, only });
    const record = await done;
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'invalid_output', node: 'classify' });
    expect(record.output).toBeNull();
  });
});
