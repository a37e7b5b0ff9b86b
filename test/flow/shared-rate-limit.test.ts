import { afterEach, describe, expect, it } from 'vitest';
import { createRateGate } from '@/lib/engine/rate-gate';
import { createVirtualClock } from '@/lib/engine/virtual-clock';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

describe('rate-limit pauses shared through the database', () => {
  it('a 429 writes rate_limit_pauses, and a process with its own gate over the same database waits it out', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, { kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'ok' }],
    });
    const t0 = Date.UTC(2026, 10, 29, 12);
    // process A: its own gate and clock
    const a = await w.run('triage', { ticket: 'refund please' }, { gate: createRateGate(), clock: createVirtualClock(t0) });
    expect(a.nodes[0]!.attempts[0]!.transport.map((t) => [t.status, t.retryAfterMs])).toEqual([
      [429, 2000],
      [200, null],
    ]);
    const row = w.db.$client.prepare('SELECT model, paused_until AS until FROM rate_limit_pauses').get() as { model: string; until: number };
    expect(row).toEqual({ model: `openrouter:${FLASH_LITE}`, until: t0 + 2000 });

    // process B: a fresh gate that never saw the 429, starting at the same moment
    const clockB = createVirtualClock(t0);
    const b = await w.run('triage', { ticket: 'refund please' }, { gate: createRateGate(), clock: clockB });
    const first = b.nodes[0]!.attempts[0]!.transport[0]!;
    expect(first.status).toBe(200);
    expect(first.waitedMs).toBe(2000);
    // and a model that was never limited does not wait
    const draft = b.nodes.find((n) => n.id === 'draft')!.attempts[0]!.transport[0]!;
    expect(draft.waitedMs).toBe(0);
  });
});
