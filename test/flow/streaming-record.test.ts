import { afterEach, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

describe('streamed text in the run history', () => {
  it('a stream dropped mid-way keeps its text on the broken try, and the attempt text starts afresh', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'drop', when: 'mid_stream', text: 'First try, cut off before the end. anna@example.com wrote in.' }, { kind: 'ok', text: 'Second try, complete.' }],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' });
    expect(rec.status).toBe('succeeded');
    const draft = getRunFacts(w.db, rec.id)!.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts).toHaveLength(1);
    const [a] = draft.attempts;
    expect(a!.tries.map((t) => [t.tryNo, t.status, t.error])).toEqual([
      [1, 200, 'connection'],
      [2, 200, null],
    ]);
    expect(a!.tries[0]!.discardedText).toMatch(/^First try/);
    expect(a!.tries[0]!.discardedText).not.toContain('anna@example.com');
    expect(a!.streamedText).toBe('Second try, complete.');
    expect(draft.output).toBe('Second try, complete.');
  });

  it('streamed text lands in the database in batches while the stream is still running', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'ok', text, latency: { first_token_ms: 0, tokens_per_s: 40 } }],
    });
    const running = w.run('triage', { ticket: 'The export button crashes.' });
    const read = () =>
      w!.db.$client.prepare(`SELECT streamed_text AS t, outcome FROM attempts WHERE model = ?`).get(`openrouter:${GPT_OSS}`) as
        | { t: string | null; outcome: string | null }
        | undefined;
    let partial: string | null = null;
    for (let i = 0; i < 200 && !partial; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const row = read();
      if (row?.t && row.outcome === null) partial = row.t;
    }
    const rec = await running;
    expect(rec.status).toBe('succeeded');
    // seen while the attempt was still in flight: a proper prefix of the final text
    expect(partial).not.toBeNull();
    expect(partial!.length).toBeLessThan(text.length);
    expect(text.startsWith(partial!)).toBe(true);
    expect(read()).toEqual({ t: text, outcome: 'ok' });
  });
});
