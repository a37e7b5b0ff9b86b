// [big] The write-ahead crash test at length (test/flow/write-ahead-crash.ts): 50 runs per
// database, in five children each SIGKILLed at a random point, every run taken over and ended.
import { describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/dialects';
import { crashRounds } from './write-ahead-crash';

describe.each(DIALECTS)('[big] write-ahead on %s', (dialect) => {
  it('50 runs, five kills: every request a recorded try, every answer counted once', async () => {
    const { problems, figures } = await crashRounds(dialect, { rounds: 5, perChild: 10, seed: 29, maxKillMs: 1500 });
    console.log(`[big] write-ahead crash on ${dialect}: ${JSON.stringify(figures)}`);
    expect(problems).toEqual([]);
    expect(figures.runs).toBe(50);
    // the kills landed mid-run: some runs were taken over, some tries cut off
    expect(figures.takenOver).toBeGreaterThan(0);
  }, 600_000);
});
