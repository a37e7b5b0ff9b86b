import { afterEach, describe, expect, it } from 'vitest';
import { getRunFacts, listRuns } from '@/db/queries';
import { RunInputError } from '@/lib/flow/run-flow';
import { getRunRecord } from '@/lib/flow/stored-run';
import type { Db } from '@/db/types';
import { DIALECTS } from '../helpers/dialects';
import { FLASH_LITE, GPT_OSS, worldOn, type World } from '../helpers/showcase';

let w: World<Db> | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

const ticket = { ticket: 'I was charged twice for my subscription this month.' };
const question = { question: 'How should a small team roll out feature flags?' };

// the run loop recording into either dialect: the stored run is the live one on both
describe.each(DIALECTS)('showcase flows over the simulator, recorded on %s', (dialect) => {
  it('triage: the classifier ends with MALFORMED_FUNCTION_CALL and falls back to gpt-oss-20b', async () => {
    w = await worldOn(dialect, {
      [FLASH_LITE]: [{ kind: 'provider_error', variant: 'finish_error', native_finish_reason: 'MALFORMED_FUNCTION_CALL' }],
      [GPT_OSS]: [{ kind: 'ok' }],
    });
    const rec = await w.run('triage', ticket);
    expect(rec.status).toBe('succeeded');
    const classify = rec.nodes.find((n) => n.id === 'classify')!;
    expect(classify.attempts.map((a) => [a.model, a.outcome, a.cause, a.action])).toEqual([
      [`openrouter:${FLASH_LITE}`, 'error', 'provider_error', 'fallback'],
      [`openrouter:${GPT_OSS}`, 'ok', null, 'none'],
    ]);
    expect(classify.attempts[0]!.discarded).toBe(true);
    expect(classify.attempts[0]!.finishReason).toBe('error');
    // the upstream reason is kept in the history for debugging
    const stored = (await getRunFacts(w.db, rec.id))!.nodes.find((n) => n.id === 'classify')!.attempts[0]!;
    expect(stored.nativeFinishReason).toBe('MALFORMED_FUNCTION_CALL');
    // the fallback model starts with its own full budget: retries 3 → 4 answers
    expect(classify.budget).toEqual({
      retries: 3,
      models: [
        { model: `openrouter:${FLASH_LITE}`, answers: 1, limit: 4 },
        { model: `openrouter:${GPT_OSS}`, answers: 1, limit: 4 },
      ],
    });
    expect(classify.output).toMatchObject({ queue: expect.stringMatching(/^(billing|tech|sales)$/) });
    expect(rec.nodes.find((n) => n.id === 'draft')!.status).toBe('succeeded');
    expect(rec.nodes.find((n) => n.id === 'manual_review')!.status).toBe('skipped');
    // the stored record is the live record, field for field
    expect(await getRunRecord(w.db, rec.id)).toEqual(rec);
    expect(JSON.stringify(await getRunRecord(w.db, rec.id))).toBe(JSON.stringify(rec));
  });

  it('triage: a refusal fails the classifier and on_fail routes the run to manual_review', async () => {
    w = await worldOn(dialect, { [FLASH_LITE]: [{ kind: 'refusal' }], [GPT_OSS]: [{ kind: 'ok' }] });
    const rec = await w.run('triage', ticket);
    const status = Object.fromEntries(rec.nodes.map((n) => [n.id, n.status]));
    expect(status).toEqual({ classify: 'failed', manual_review: 'succeeded', draft: 'skipped' });
    const classify = rec.nodes.find((n) => n.id === 'classify')!;
    expect(classify.error).toMatchObject({ code: 'refusal', hint: expect.stringContaining('output.on_refusal') });
    expect(classify.attempts).toHaveLength(1);
    expect(classify.attempts[0]).toMatchObject({ outcome: 'refusal', cause: 'refusal', action: 'none' });
    expect(rec.status).toBe('succeeded');
    expect(rec.error).toBeNull();
    expect(Object.keys(rec.output as object)).toEqual(['manual_review']);
    expect(await getRunRecord(w.db, rec.id)).toEqual(rec);
  });

  it('long-answer: a truncated answer that still parses fails the run with the hint naming output.on_truncated', async () => {
    w = await worldOn(dialect, { [GPT_OSS]: [{ kind: 'truncated', parses: true }] });
    const rec = await w.run('long-answer', question);
    expect(rec.status).toBe('failed');
    expect(rec.error).toMatchObject({ code: 'truncated', node: 'draft' });
    expect(rec.error!.hint).toContain('output.on_truncated');
    expect(rec.error!.hint).toContain('agents/gpt.yaml');
    // the hint as stored ends with the command that prints its code's page (docs/errors.md#truncated)
    expect((await getRunRecord(w.db, rec.id))!.error!.hint).toMatch(/agents\/gpt\.yaml — see: aqven explain truncated$/);
    const draft = rec.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts).toHaveLength(1);
    expect(draft.attempts[0]).toMatchObject({ outcome: 'truncated', cause: 'truncated', action: 'none' });
    // truncated JSON is never validated
    expect(draft.attempts[0]!.error!.validationErrors).toEqual([]);
    expect(
      rec.nodes
        .filter((n) => n.status === 'skipped')
        .map((n) => n.id)
        .sort(),
    ).toEqual(['critique', 'final', 'revise']);
    const stored = (await listRuns(w.db)).items[0]!;
    expect(stored).toMatchObject({ id: rec.id, status: 'failed', errorCode: 'truncated', errorNode: 'draft' });
  });

  it('long-answer: gpt repairs its draft four times (output.retries: 4) and the run succeeds', async () => {
    w = await worldOn(dialect, {
      [GPT_OSS]: [{ kind: 'invalid' }, { kind: 'invalid' }, { kind: 'invalid', mode: 'not_json' }, { kind: 'invalid' }, { kind: 'ok' }],
    });
    const rec = await w.run('long-answer', question);
    expect(rec.status).toBe('succeeded');
    const draft = rec.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts.map((a) => a.action)).toEqual(['repair', 'repair', 'repair', 'repair', 'none']);
    expect(draft.attempts.slice(0, 4).every((a) => a.cause === 'invalid_output' && a.error!.validationErrors.length > 0)).toBe(true);
    expect(draft.budget.models[0]).toMatchObject({ answers: 5, limit: 5 });
    // every repair request carries the validation errors of the answer before it
    const requests = w.sim.requests().slice(1, 5);
    for (const r of requests) {
      const messages = (r.body as { messages: { role: string; content: string }[] }).messages;
      expect(messages.at(-2)!.role).toBe('assistant');
      expect(messages.at(-1)!.content).toMatch(/did not match|validation|schema/i);
    }
    expect(rec.nodes.map((n) => [n.id, n.turn, n.status])).toEqual([
      ['draft', 1, 'succeeded'],
      ['critique', 2, 'succeeded'],
      ['revise', 3, 'succeeded'],
      ['final', 4, 'succeeded'],
    ]);
    // the run's usage is the sum over every attempt, repairs included
    const attempts = rec.nodes.flatMap((n) => n.attempts);
    expect(rec.usage.inputTokens).toBe(attempts.reduce((s, a) => s + a.usage.inputTokens, 0));
    expect(rec.usage.outputTokens).toBe(attempts.reduce((s, a) => s + a.usage.outputTokens, 0));
  });

  it('an engine that cannot call a node fails the run and the node, and the stored run says so', async () => {
    w = await worldOn(dialect, {});
    const rec = await w.run('triage', ticket, { providers: {} });
    expect(rec.status).toBe('failed');
    expect(rec.error).toMatchObject({ code: 'internal_error', node: 'classify', message: expect.stringContaining('not configured') });
    expect(rec.nodes.find((n) => n.id === 'classify')!.status).toBe('failed');
    expect(await getRunRecord(w.db, rec.id)).toEqual(rec);
  });

  it('bad input is a clear error naming the field, and nothing is stored as running', async () => {
    w = await worldOn(dialect, {});
    await expect(w.run('triage', { ticket: 42 })).rejects.toThrow(RunInputError);
    await expect(w.run('triage', {})).rejects.toThrow(/input\.ticket is required/);
    expect((await listRuns(w.db)).items).toEqual([]);
  });
});
