// Text that may become failure text is never written raw (DESIGN: Streaming, Redaction, Storage):
// not in the database file, not in its WAL, not while the stream runs, not after. Raw bytes of the
// files are searched, as a user with a hex editor (or a backup of the WAL) would.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeProject } from '../helpers/fixture-project';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';
import { rawValuesOnDisk } from '../helpers/raw-on-disk';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

const KEY = 'sk-or-v1-7c1e9a4b2d8f6e3a0b5c9d2e7f4a1b8c6d3e0f9a';
const EMAIL = 'anna@example.com';
const CARD = '4111 1111 1111 1111';
const IP = '192.168.77.12';
const RAW = [EMAIL, CARD, IP, KEY];

// each value several times, so the stream's chunks (12 characters on this wire) cut them
// everywhere, and some copy lies within one database page whatever the layout
const STREAMED = Array.from({ length: 20 }, (_, i) => `Paragraph ${i}: write to ${EMAIL} about card ${CARD}, seen from ${IP}; the key ${KEY} was in the log. `).join('');

describe('streamed text at rest', () => {
  it('a streamed answer quoting an email, a card, an IP and the API key: no raw value in aqven.db or aqven.db-wal, while it runs and after', async () => {
    w = await world({
      [FLASH_LITE]: [{ kind: 'ok' }],
      // cut off (writer: on_truncated fail): the streamed text becomes discarded failure text
      [GPT_OSS]: [{ kind: 'truncated', text: STREAMED, latency: { first_token_ms: 0, tokens_per_s: 600 } }],
    });
    const dbDir = join(w.dir, '.aqven');
    const running = w.run('triage', { ticket: 'The invoice is wrong.' }, { env: { ...process.env, OPENROUTER_API_KEY: KEY } });

    // while it runs: batches of the stream are on disk (stream_chunks), redacted
    const chunks = () => w!.db.$client.prepare(`SELECT group_concat(text, '') AS t FROM stream_chunks`).get() as { t: string | null };
    let seen: string | null = null;
    for (let i = 0; i < 500 && !seen?.includes('<API_KEY>'); i++) {
      await new Promise((r) => setTimeout(r, 10));
      seen = chunks().t;
    }
    expect(seen).toContain('<EMAIL>');
    expect(seen).toContain('<API_KEY>');
    expect(existsSync(join(dbDir, 'aqven.db-wal'))).toBe(true);
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);

    const rec = await running;
    expect(rec.status).toBe('failed');
    expect(rec.error).toMatchObject({ code: 'truncated', node: 'draft' });
    // after the run, the WAL not yet checkpointed away
    w.db.$client.pragma('wal_checkpoint(PASSIVE)');
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);
    const stored = w.db.$client.prepare(`SELECT streamed_text AS s, error_detail AS d, discarded FROM attempts WHERE streamed_text IS NOT NULL`).get() as {
      s: string;
      d: string;
      discarded: number;
    };
    expect(stored.discarded).toBe(1);
    expect(stored.s).toContain(`write to <EMAIL> about card <CARD>, seen from <IP>; the key <API_KEY> was`);
    expect(stored.d).toBe(stored.s);

    await w.close();
    w = null;
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);
  });

  it('validation errors quoting keys the model wrote: no raw value in the attempt, node or run rows, nor on disk', async () => {
    const dir = await writeProject({
      'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\noutput:\n  retries: 1\n',
      'flows/ask.yaml': [
        'apiVersion: "aqven/v1"',
        'kind: "Flow"',
        'input: { type: object, properties: { question: { type: string } } }',
        'nodes:',
        '  answer:',
        '    agent: "helper"',
        '    prompt: "Score the people in: {{ input.question }}"',
        '    output:',
        '      type: object',
        '      properties: { scores: { type: object, additionalProperties: { type: number } } }',
        '      required: [scores]',
        '      additionalProperties: false',
        '',
      ].join('\n'),
    });
    const bad = JSON.stringify({ scores: { [EMAIL]: 'high' }, [IP]: 1 });
    w = await world({ [GPT_OSS]: [{ kind: 'ok', text: bad }] }, dir);
    const rec = await w.run('ask', { question: 'the ticket of last week' });
    expect(rec.status).toBe('failed');
    expect(rec.error!.code).toBe('invalid_output');
    expect(rec.error!.message).toContain('/scores/<EMAIL> must be number');

    const rows = w.db.$client
      .prepare(
        `SELECT a.error_message || a.validation_errors || a.request || coalesce(a.error_detail, '') || n.error_message || r.error_message AS t
         FROM attempts a JOIN node_runs n ON n.id = a.node_run_id JOIN runs r ON r.id = a.run_id`,
      )
      .all() as { t: string }[];
    expect(rows).toHaveLength(2); // the answer, and the repair's answer
    for (const { t } of rows) {
      expect(t).toContain('<EMAIL>');
      expect(t).not.toContain(EMAIL);
      expect(t).not.toContain(IP);
    }
    const dbDir = join(w.dir, '.aqven');
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);
    await w.close();
    w = null;
    expect(rawValuesOnDisk(dbDir, RAW)).toEqual([]);
  });
});
