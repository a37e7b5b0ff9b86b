import { describe, expect, it } from 'vitest';
import type { ModelLimit } from '@/lib/shared/limits-types';
import { STALE_RUNNING_MS } from '@/lib/shared/limits-types';
import { modelLimitsViews } from './limits-view';

const row = (o: Partial<ModelLimit>): ModelLimit => ({
  model: 'openrouter:a/b',
  dimension: 'depth',
  status: 'complete',
  lastHeld: 5,
  firstFailed: 6,
  threshold: 0.9,
  trials: 5,
  levels: [],
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
  measuredOn: '2026-12-01',
  startedAt: 0,
  updatedAt: 0,
  runId: null,
  settings: { trials: 5, threshold: 0.9, maxTokens: 8192, strict: false, tasks: 1 },
  ...o,
});

describe('modelLimitsViews', () => {
  it('rates a level over its answered trials, truncated and errored ones apart, and holds it as the probe does', () => {
    const [view] = modelLimitsViews(
      ['openrouter:a/b'],
      [
        row({
          levels: [
            { level: 6, trials: 10, firstTryValid: 5, afterRepairValid: 6, truncated: 2, errors: 2, calls: 14 },
            { level: 5, trials: 5, firstTryValid: 5, afterRepairValid: 5, truncated: 0, calls: 5 },
          ],
        }),
      ],
    );
    const [five, six] = view!.dimensions[0]!.levels;
    expect([five!.level, five!.held, five!.firstTry.value]).toEqual([5, true, 1]);
    // 5 valid of the 6 answered (4 of its 10 trials got no answer to judge): 83% < 90%, it failed
    expect([six!.level, six!.judged, six!.firstTry.value, six!.afterRepair.value, six!.held]).toEqual([6, 6, 5 / 6, 1, false]);
    expect(six!.firstTry.low).toBeLessThan(5 / 6);
    expect(six!.firstTry.high).toBeGreaterThan(5 / 6);
  });

  it('keeps the models in the order asked, a model never measured with no dimensions, and depth, list, enum in order', () => {
    const views = modelLimitsViews(['openrouter:x/y', 'openrouter:a/b'], [row({ dimension: 'enum' }), row({ dimension: 'depth' }), row({ dimension: 'list' })]);
    expect(views.map((v) => [v.model, v.dimensions.map((d) => d.dimension)])).toEqual([
      ['openrouter:x/y', []],
      ['openrouter:a/b', ['depth', 'list', 'enum']],
    ]);
  });

  it('reads a running row its process stopped writing as partial, so the page stops waiting for it', () => {
    const now = 1_000_000_000;
    const [fresh] = modelLimitsViews(['openrouter:a/b'], [row({ status: 'running', updatedAt: now - 1000 })], now);
    expect(fresh!.dimensions[0]!.status).toBe('running');
    const [stale] = modelLimitsViews(['openrouter:a/b'], [row({ status: 'running', updatedAt: now - STALE_RUNNING_MS - 1 })], now);
    expect(stale!.dimensions[0]!.status).toBe('partial');
  });
});
