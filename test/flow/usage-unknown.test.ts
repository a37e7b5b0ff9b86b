// A reply cut at transport.max_response_bytes (default 8 MiB, after decompression): its usage is
// unknown, and the run history says so — stored, in the run record and in `aqven show` — never zero.
import { afterEach, describe, expect, it } from 'vitest';
import { formatRun } from '@/lib/cli/format-run';
import { getRunRecord } from '@/lib/flow/stored-run';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

describe('usage unknown', () => {
  it('a 9 MiB gzip stream past the default 8 MiB limit: the attempt is stored usage_unknown, and shown as "usage unknown"', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [
        { kind: 'ok', gzip: true, pad_bytes: 9 * 1024 * 1024 },
        { kind: 'ok', text: 'A short reply.' },
      ],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' });
    const row = w.db.$client.prepare(`SELECT usage_unknown AS u, error_kind AS k FROM attempts WHERE model = ? ORDER BY seq`).all(`openrouter:${GPT_OSS}`);
    expect(row).toEqual([{ u: 1, k: 'client_error' }]); // not retried: the same request would bring the same body
    const stored = (await getRunRecord(w.db, rec.id))!;
    const draft = stored.nodes.find((n) => n.id === 'draft')!;
    expect(draft.attempts.map((a) => a.usageUnknown)).toEqual([true]);
    expect(draft.attempts[0]!.error?.message).toContain('transport.max_response_bytes (8 MiB)');
    expect(stored.usageUnknown).toBe(true);
    expect(stored.nodes.find((n) => n.id === 'classify')!.attempts[0]!.usageUnknown).toBe(false);
    const text = formatRun(stored);
    expect(text).toMatch(/#1 openrouter:openai\/gpt-oss-20b .*usage unknown/);
    expect(text.split('\n')[0]).toMatch(/cost ≥ \$[0-9.]+ \(1 attempt without usage\)/);
  });
});

describe('reasoning tokens and whose price the cost is, stored', () => {
  it('an OpenRouter answer: its stated cost (costSource provider) and its reasoning tokens survive the database', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      [GPT_OSS]: [{ kind: 'ok', text: 'A short reply.', usage: { input: 40, output: 10, thoughts: 25 } }],
    });
    const rec = await w.run('triage', { ticket: 'The export button crashes.' });
    const stored = (await getRunRecord(w.db, rec.id))!;
    const a = stored.nodes.find((n) => n.id === 'draft')!.attempts[0]!;
    expect(a).toMatchObject({ costSource: 'provider', reasoningTokens: 25, usage: { inputTokens: 40, outputTokens: 35 } });
    expect(stored.nodes.find((n) => n.id === 'classify')!.attempts[0]!.reasoningTokens).toBeNull();
  });
});
