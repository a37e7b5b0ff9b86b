import { count } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { getRunFacts } from '@/db/queries';
import { STREAM_HOLD_CHARS } from '@/lib/redact';
import type { Db } from '@/db/types';
import { DIALECTS } from '../helpers/dialects';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';

let w: World<Db> | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

describe.each(DIALECTS)('streamed text in the run history on %s', (dialect) => {
  it('a stream dropped mid-way keeps its text on the broken try, and the attempt text starts afresh', async () => {
    w = await worldOn(dialect, {
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [
        { kind: 'drop', when: 'mid_stream', text: 'First try, cut off before the end. anna@example.com wrote in.' },
        { kind: 'ok', text: 'Second try, complete.' },
      ],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' });
    expect(rec.status).toBe('succeeded');
    const draft = (await getRunFacts(w.db, rec.id))!.nodes.find((n) => n.id === 'draft')!;
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
    // longer than the tail the engine holds back before any of it may be stored (STREAM_HOLD_CHARS)
    const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    expect(text.length).toBeGreaterThan(STREAM_HOLD_CHARS * 4);
    w = await worldOn(dialect, {
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'ok', text, latency: { first_token_ms: 0, tokens_per_s: 400 } }],
    });
    const running = w.run('triage', { ticket: 'The export button crashes.' });
    // read as the dashboard reads a run in progress (the text of an attempt in flight is in stream_chunks)
    const draftAttempt = async () => {
      const db = w!.db;
      const runId = (await db.q.select({ id: db.t.runs.id }).from(db.t.runs).limit(1))[0]?.id;
      return runId ? (await getRunFacts(w!.db, runId))?.nodes.find((n) => n.id === 'draft')?.attempts[0] : undefined;
    };
    let partial: string | null = null;
    for (let i = 0; i < 400 && !partial; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const a = await draftAttempt();
      if (a?.streamedText && a.outcome === null) partial = a.streamedText;
    }
    const rec = await running;
    expect(rec.status).toBe('succeeded');
    // seen while the attempt was still in flight: a proper prefix of the final text
    expect(partial).not.toBeNull();
    expect(partial!.length).toBeLessThan(text.length);
    expect(text.startsWith(partial!)).toBe(true);
    expect(await draftAttempt()).toMatchObject({ streamedText: text, outcome: 'ok' });
    // the batches are gone once the attempt holds its whole text
    expect(await w.db.q.select({ n: count() }).from(w.db.t.streamChunks)).toEqual([{ n: 0 }]);
  });
});
