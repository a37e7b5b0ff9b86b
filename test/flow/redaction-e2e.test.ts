import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
afterEach(async () => {
  await w?.close();
  w = null;
});

const ticket = { ticket: 'My card was declined at checkout.' };
const SECRET = 'anna@example.com';

describe('redaction end to end', () => {
  it('a refusal quoting anna@example.com is stored as <EMAIL>, and no byte of the address is left in the database files', async () => {
    const refusal = `I can't share details about ${SECRET} or their account.`;
    w = await world({
      // the classifier refuses (not streamed) …
      [FLASH_LITE]: [{ kind: 'refusal', text: refusal }, { kind: 'ok' }],
      // … and in a second run the streamed draft refuses after its text went out in batches
      [GPT_OSS]: [{ kind: 'ok' }, { kind: 'refusal', text: `${refusal} ${'More words to stream. '.repeat(200)}` }],
    });
    const first = await w.run('triage', ticket);
    expect(first.nodes.find((n) => n.id === 'classify')!.status).toBe('failed');
    const second = await w.run('triage', ticket);
    expect(second.status).toBe('failed');
    expect(second.error!.code).toBe('refusal');

    const details = w.db.$client.prepare(`SELECT error_detail AS d, streamed_text AS s FROM attempts WHERE outcome = 'refusal'`).all() as { d: string | null; s: string | null }[];
    expect(details).toHaveLength(2);
    for (const { d } of details) {
      expect(d).toContain("I can't share details about <EMAIL> or their account.");
    }
    const dbDir = join(w.dir, '.aqven');
    await w.close();
    w = null;
    for (const f of readdirSync(dbDir)) {
      expect(readFileSync(join(dbDir, f)).includes(Buffer.from(SECRET)), `${f} contains the address`).toBe(false);
    }
  });

  it('a simulated run sends a placeholder key, and the real key of the environment, echoed back, is stored as <API_KEY>', async () => {
    const KEY = 'sk-or-v1-redaction-e2e-real-key-7f3a9c';
    const before = process.env.OPENROUTER_API_KEY;
    process.env.OPENROUTER_API_KEY = KEY;
    try {
      w = await world({ [FLASH_LITE]: [{ kind: 'refusal', text: `Your key ${KEY} is not allowed to ask this.` }], [GPT_OSS]: [{ kind: 'ok' }] });
      const r = await w.run('triage', ticket);
      expect(r.nodes.find((n) => n.id === 'classify')!.status).toBe('failed');
      const rows = w.db.$client.prepare(`SELECT error_message AS m, error_detail AS d FROM attempts WHERE outcome = 'refusal'`).all() as { m: string; d: string }[];
      expect(rows.length).toBeGreaterThan(0);
      for (const { d } of rows) expect(d).toContain('Your key <API_KEY> is not allowed');
      const dbDir = join(w.dir, '.aqven');
      await w.close();
      w = null;
      for (const f of readdirSync(dbDir)) expect(readFileSync(join(dbDir, f)).includes(Buffer.from(KEY)), `${f} contains the key`).toBe(false);
    } finally {
      if (before === undefined) delete process.env.OPENROUTER_API_KEY;
      else process.env.OPENROUTER_API_KEY = before;
    }
  });
});
