// No request leaves without a durable record of it (DESIGN: Storage, "Write-ahead"), on both
// databases: a process SIGKILLed at a random point of its runs, the runs taken over and ended by
// another; every request the simulator received is a recorded try, and every answer counts once.
// The short version; `npm run test:load` runs 50 runs in five kills (write-ahead-crash.load.test.ts).
import { describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/dialects';
import { crashRounds } from './write-ahead-crash';

describe.each(DIALECTS)('write-ahead on %s', (dialect) => {
  it('a process killed mid-run leaves a recorded try for every request it sent, and its answers counted once', async () => {
    const { problems, figures } = await crashRounds(dialect, { rounds: 2, perChild: 5, seed: 11, maxKillMs: 600 });
    console.log(`write-ahead crash on ${dialect}: ${JSON.stringify(figures)}`);
    expect(problems).toEqual([]);
    expect(figures.runs).toBe(10);
    expect(figures.tries).toBeGreaterThanOrEqual(figures.requests);
  }, 120_000);
});
