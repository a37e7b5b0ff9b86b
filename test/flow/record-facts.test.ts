// Nothing the engine knows is hidden from the record (DESIGN: The run record): the native finish
// reason, a try's dropped streamed text, the request as sent, each attempt's answer number and
// chain index, and the hint of a failed node an on_fail route went around are in the record that
// `aqven show --json` and GET /api/runs/:id print, and where a person looks in `aqven show`'s text.
import { afterEach, describe, expect, it } from 'vitest';
import { formatRun } from '@/lib/cli/format-run';
import { createRateGate } from '@/lib/engine/rate-gate';
import { createVirtualClock } from '@/lib/engine/virtual-clock';
import { getRunRecord } from '@/lib/flow/stored-run';
import { shortRunId } from '@/lib/shared/short-id';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

// the transport's backoff between tries passes on a virtual clock: no real wait
const virtual = () => ({ gate: createRateGate(), clock: createVirtualClock(Date.UTC(2026, 0, 1)) });

const lines = (text: string) => text.split('\n');

describe('the run record carries what the dashboard shows', () => {
  it('a refusal decided by OpenRouter native_finish_reason, routed around by on_fail: the native value and the node hint in record and text', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok', finish_reason: 'stop', native_finish_reason: 'SAFETY' }],
      [GPT_OSS]: [{ kind: 'ok', text: 'A summary for a human.' }],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' }, virtual());
    expect(rec.status).toBe('succeeded');
    const stored = (await getRunRecord(w.db, rec.id))!;
    expect(stored).toEqual(rec);

    const classify = stored.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.outcome, a.finishReason, a.nativeFinishReason])).toEqual([['refusal', 'stop', 'SAFETY']]);
    expect(classify.error).toMatchObject({ code: 'refusal' });
    expect(classify.error!.hint).toContain('on_refusal');
    // the answer that was kept has a native value too, the same as its finish reason
    expect(stored.nodes.find((n) => n.id === 'manual_review')!.attempts[0]!.nativeFinishReason).toBe('stop');

    const text = lines(formatRun(stored));
    const at = text.findIndex((l) => l.startsWith('  turn 1  classify (classifier)  failed  refusal'));
    expect(at).toBeGreaterThan(0);
    expect(text[at + 1]).toMatch(/^ {4}#1 openrouter:google\/gemini-2\.5-flash-lite {2}refusal \(stop, native SAFETY\) {2}cause refusal/);
    expect(text[at + 2]).toBe(`    refusal: ${classify.error!.message}`);
    expect(text[at + 3]).toBe(`    hint: ${classify.error!.hint}`);
    // the same native value as the finish reason is not repeated
    expect(text.find((l) => l.includes('#1 openrouter:openai/gpt-oss-20b'))).toMatch(/ok \(stop\) {2}/);
  });

  it('a stream broken by a mid-stream 5xx, retried inside the attempt: the dropped text on its try, redacted, and counted in the text', async () => {
    const dropped = 'First try, cut off. anna@example.com wrote in.';
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [
        { kind: 'stream_error', text: dropped },
        { kind: 'ok', text: 'Second try, complete.' },
      ],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' }, virtual());
    expect(rec.status).toBe('succeeded');
    const stored = (await getRunRecord(w.db, rec.id))!;
    const [a] = stored.nodes.find((n) => n.id === 'draft')!.attempts;
    // the live record says the same (its usage lookup, looked up once stored, aside)
    expect(rec.nodes.find((n) => n.id === 'draft')!.attempts[0]!.transport).toEqual(a!.transport);

    expect(a!.transport).toEqual([
      { try: 1, status: 200, error: 'server_error', retryAfterMs: null, waitedMs: 0, discardedText: 'First try, cut off. <EMAIL> wrote in.' },
      expect.objectContaining({ try: 2, status: 200, error: null, discardedText: null }),
    ]);
    // as stored: never un-redacted
    const row = w.db.$client
      .prepare(`SELECT t.discarded_text AS d FROM transport_tries t JOIN attempts a ON a.id = t.attempt_id WHERE a.run_id = ? AND t.try_no = 1 AND t.discarded_text IS NOT NULL`)
      .get(rec.id) as { d: string };
    expect(a!.transport[0]!.discardedText).toBe(row.d);

    const text = formatRun(stored);
    const chars = Array.from(a!.transport[0]!.discardedText!).length;
    expect(text).toContain(`tries: 200 server_error (dropped ${chars} chars of streamed text), 200`);
    expect(text).not.toContain('<EMAIL>');
    expect(lines(text).at(-1)).toBe(`requests as sent and dropped streamed text: aqven show ${shortRunId(rec.id)} --json`);
  });

  it('a repair, then a fallback: each attempt says its answer of retries + 1 and its place in the chain, and its request as sent', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'invalid', mode: 'wrong_enum' }, { kind: 'provider_error' }],
      [GPT_OSS]: [{ kind: 'ok' }],
    });
    const rec = await w.run('triage', { ticket: 'Refund my order, please.' }, virtual());
    expect(rec.status).toBe('succeeded');
    const stored = (await getRunRecord(w.db, rec.id))!;
    expect(stored).toEqual(rec);

    const classify = stored.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.seq, a.model, a.answerNo, a.chainIndex, a.action])).toEqual([
      [1, `openrouter:${FLASH_LITE}`, 1, 0, 'repair'],
      [2, `openrouter:${FLASH_LITE}`, 2, 0, 'fallback'],
      [3, `openrouter:${GPT_OSS}`, 1, 1, 'none'],
    ]);
    // the request as stored: the first as the prompt made it, the repair with the answer quoted back
    const [first, repair] = classify.attempts;
    expect(first!.request.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first!.request[1]!.content).toContain('Refund my order, please.');
    expect(repair!.request.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    const rows = w.db.$client
      .prepare(`SELECT a.request AS r FROM attempts a JOIN node_runs n ON n.id = a.node_run_id WHERE a.run_id = ? AND n.node_id = 'classify' ORDER BY a.seq`)
      .all(rec.id) as { r: string }[];
    expect(classify.attempts.map((a) => a.request)).toEqual(rows.map((x) => JSON.parse(x.r)));

    const text = lines(formatRun(stored));
    const attemptLine = (seq: number) => text.find((l) => l.startsWith(`    #${seq} `))!;
    // classifier: output.retries 3, so 4 answers per model
    expect(attemptLine(1)).toContain('action repair  answer 1/4 · chain 0  ');
    expect(attemptLine(2)).toContain('action fallback  answer 2/4 · chain 0  ');
    expect(attemptLine(3)).toContain('action none  answer 1/4 · chain 1  ');
    // the requests are too long for a terminal: the text says where they are, and prints none
    expect(text.at(-1)).toBe(`requests as sent: aqven show ${shortRunId(rec.id)} --json`);
    expect(text.join('\n')).not.toContain('Sort this ticket into a queue');
  });
});
