// A node restarted after its process died (DESIGN: Storage, "Leases"; Outcome policies, repair and
// budgets) over the real simulator: the answers its models gave before count against their
// `retries + 1`, the first request is the node's original one, and — cut after any number of
// stored answers — the node ends exactly as the uninterrupted call ended.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptRecord, NodeCall, NodeResult, PriorAnswers } from '@/lib/engine/types';
import type { ScriptStep } from '@/lib/sim/types';
import { DIALECTS, harness, node, other, SCHEMA, turns, type DialectCase } from './helpers';

let h: Awaited<ReturnType<typeof harness>>;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h.close());
beforeEach(() => h.fresh());

const VALID = { queue: 'billing', confidence: 0.8 };

/** The first `k` attempts of a call, as a restarted node is given them. */
function priorOf(attempts: AttemptRecord[], k: number): PriorAnswers {
  return { attempts: attempts.slice(0, k).map(({ model, outcome, error, responseText, tries }) => ({ model, outcome, error, responseText, tries })), lastSeq: k };
}

const shape = (a: AttemptRecord) => [a.seq, a.model, a.chainIndex, a.answerNo, a.outcome, a.cause, a.action];

interface Scenario {
  name: string;
  call: (c: DialectCase) => NodeCall;
  /** the scripts, by model id */
  scripts: (c: DialectCase) => Record<string, ScriptStep[]>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'on_error: retry, both answers errors → fails on the budget',
    call: (c) => node([c.model]),
    scripts: (c) => ({ [c.modelId]: [{ kind: 'provider_error' }, { kind: 'provider_error' }] }),
  },
  {
    name: 'three repairs, an error → fallback; the fallback model repairs once and succeeds',
    call: (c) => node([c.model, other(c).model], { outputSchema: SCHEMA, policy: { retries: 3, onError: 'fallback' } }),
    scripts: (c) => ({
      [c.modelId]: [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid' }, { kind: 'provider_error' }],
      [other(c).modelId]: [{ kind: 'invalid' }, { kind: 'ok', json: VALID }],
    }),
  },
  {
    name: 'invalid output with its answers used → fails (invalid output never falls back)',
    call: (c) => node([c.model, other(c).model], { outputSchema: SCHEMA, policy: { retries: 1, onError: 'fallback' } }),
    scripts: (c) => ({ [c.modelId]: [{ kind: 'invalid' }, { kind: 'invalid' }] }),
  },
  {
    name: 'a repair, then a valid answer',
    call: (c) => node([c.model], { outputSchema: SCHEMA }),
    scripts: (c) => ({
      [c.modelId]: [
        { kind: 'invalid', mode: 'wrong_enum' },
        { kind: 'ok', json: VALID },
      ],
    }),
  },
  {
    name: 'a refusal under on_refusal: fail',
    call: (c) => node([c.model, other(c).model], { policy: { onError: 'fallback' } }),
    scripts: (c) => ({ [c.modelId]: [{ kind: 'refusal' }] }),
  },
];

/** The script of each model without the steps the first `k` attempts played. */
function rest(scripts: Record<string, ScriptStep[]>, attempts: AttemptRecord[], k: number, c: DialectCase): Record<string, ScriptStep[]> {
  const out: Record<string, ScriptStep[]> = {};
  for (const [id, steps] of Object.entries(scripts)) {
    const played = attempts.slice(0, k).filter((a) => a.model === `${c.provider}:${id}`).length;
    out[id] = played < steps.length ? steps.slice(played) : steps.slice(-1);
  }
  return out;
}

describe.each(DIALECTS)('a restarted node over $dialect', (c) => {
  it.each(SCENARIOS)('ends as the uninterrupted call did, whatever number of answers were stored: $name', async (s) => {
    h.script(s.scripts(c));
    const whole: NodeResult = await h.run(s.call(c));
    const n = whole.attempts.length;
    for (let k = 1; k <= n; k++) {
      h.fresh();
      h.script(rest(s.scripts(c), whole.attempts, k, c));
      const res = await h.run({ ...s.call(c), prior: priorOf(whole.attempts, k) });
      expect({ k, status: res.status, output: res.output, error: res.error }).toEqual({ k, status: whole.status, output: whole.output, error: whole.error });
      // the same attempts after the stored ones: numbered on, each model's answers counted on
      expect(res.attempts.map(shape)).toEqual(whole.attempts.slice(k).map(shape));
      expect(res.budget).toEqual(whole.budget);
      expect(h.requests()).toHaveLength(n - k);
      // the first request is the node's original one, never a repair prompt
      const first = h.requests()[0];
      if (first) expect(turns(first)).toBe(1);
    }
  });

  it('a model that gave its retries + 1 answers is not asked again: the node falls back, or fails, at once', async () => {
    const fb = other(c);
    const errors = { model: c.model, outcome: 'error' as const, error: { kind: 'provider_error' as const, message: 'x', detail: null }, responseText: null, tries: [] };
    h.script({ [fb.modelId]: [{ kind: 'ok', json: VALID }] });
    const prior = { attempts: [errors, errors], lastSeq: 3 }; // seq 3: a cut-off attempt was stored too
    const fellBack = await h.run({ ...node([c.model, fb.model], { outputSchema: SCHEMA, policy: { retries: 1, onError: 'fallback' } }), prior });
    expect(fellBack.status).toBe('succeeded');
    expect(fellBack.attempts.map(shape)).toEqual([[4, fb.model, 1, 1, 'ok', null, 'none']]);
    expect(h.requests(c.modelId)).toHaveLength(0);
    expect(fellBack.budget.models).toEqual([
      { model: c.model, answers: 2, limit: 2 },
      { model: fb.model, answers: 1, limit: 2 },
    ]);

    h.fresh();
    const failed = await h.run({ ...node([c.model], { policy: { retries: 1, onError: 'retry' } }), prior });
    expect(h.requests()).toHaveLength(0);
    expect(failed).toMatchObject({ status: 'failed', attempts: [], error: { code: 'provider_error' } });
    expect(failed.error!.message).toContain(`${c.model} has given all 2 answers allowed (output.retries: 1)`);
  });

  it('answers of the current model count: one answer left is one request, and the original request goes', async () => {
    const invalid = { model: c.model, outcome: 'ok' as const, error: { kind: 'invalid_output' as const, message: 'x', detail: null }, responseText: '{}', tries: [] };
    h.script({ [c.modelId]: [{ kind: 'invalid' }] });
    const res = await h.run({ ...node([c.model], { outputSchema: SCHEMA, policy: { retries: 2 } }), prior: { attempts: [invalid, invalid], lastSeq: 2 } });
    expect(res.status).toBe('failed');
    expect(res.error!.code).toBe('invalid_output');
    expect(res.attempts.map(shape)).toEqual([[3, c.model, 0, 3, 'ok', 'invalid_output', 'none']]);
    expect(h.requests(c.modelId)).toHaveLength(1);
    expect(res.attempts[0]!.request).toHaveLength(1); // the prompt alone: no repair turns
  });
});
