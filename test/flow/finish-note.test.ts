// An answer whose finish reason decided nothing — an unrecognised value, or none on a whole
// response — is ok, and the run history says so (DESIGN: Outcome classification): the native value
// is stored, and the note is in the attempts row, the run record and `aqven show`.
import { afterEach, describe, expect, it } from 'vitest';
import { formatRun } from '@/lib/cli/format-run';
import { getRunRecord } from '@/lib/flow/stored-run';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

describe('finish note', () => {
  it('an unrecognised finish reason `eos` is ok: stored as sent, with a note in the row, the record and aqven show', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'ok', text: 'A short reply.', finish_reason: 'eos', native_finish_reason: 'eos' }],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' });
    expect(rec.status).toBe('succeeded');
    const rows = w.db.$client.prepare(`SELECT outcome, finish_reason AS f, finish_note AS n FROM attempts WHERE model = ? ORDER BY seq`).all(`openrouter:${GPT_OSS}`);
    expect(rows).toEqual([{ outcome: 'ok', f: 'eos', n: 'unrecognised finish reason `eos`' }]);
    const stored = (await getRunRecord(w.db, rec.id))!;
    const draft = stored.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts.map((a) => [a.outcome, a.finishReason, a.finishNote])).toEqual([['ok', 'eos', 'unrecognised finish reason `eos`']]);
    // the other node's attempts carry none
    expect(stored.nodes.find((n) => n.id === 'classify')!.attempts[0]!.finishNote).toBeNull();
    expect(formatRun(stored)).toMatch(/#1 openrouter:openai\/gpt-oss-20b {2}ok \(eos\) {2}note: unrecognised finish reason `eos`/);
  });
});
