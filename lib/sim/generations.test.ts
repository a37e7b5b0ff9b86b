// The OpenRouter flavour's generation stats (lib/sim/generations.ts): every answer it rendered —
// one whose body it dropped included, it was billed — by its generation id, in OpenRouter's shape;
// 404 for an id it does not know or whose stats are not ready; 401 for a key it does not accept;
// the oldest forgotten past `keep`; 400 for an id another simulator made (each tags its ids).
import { afterEach, describe, expect, it } from 'vitest';
import { simCost, startSimulator } from './index';
import type { SimServer } from './types';

const MODEL = 'openai/gpt-oss-20b';
const USAGE = { input: 40, output: 8, thoughts: 2 };

describe('simulator: GET /generation (openrouter)', () => {
  let sim: SimServer | null = null;
  afterEach(async () => {
    await sim?.close();
    sim = null;
  });
  const ask = (s: SimServer, id: string, key?: string) =>
    fetch(`${s.baseUrl('openrouter')}/generation?id=${encodeURIComponent(id)}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const chat = async (s: SimServer) => {
    const res = await fetch(`${s.baseUrl('openrouter')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const id = res.headers.get('x-generation-id')!;
    await res.text().catch(() => ''); // a dropped body breaks here
    return id;
  };

  it('serves the usage of an answer whose body was dropped, in OpenRouter shape; 404 for an unknown id', async () => {
    sim = await startSimulator({ scripts: { [MODEL]: [{ kind: 'drop', when: 'during_body', usage: USAGE }] } });
    const id = await chat(sim);
    expect(id).toMatch(/^gen-sim-[0-9a-f]{8}-\d{8}$/);
    const res = await ask(sim, id);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: Record<string, unknown> };
    expect(data).toMatchObject({
      id,
      model: MODEL,
      tokens_prompt: 40,
      tokens_completion: 10,
      native_tokens_prompt: 40,
      native_tokens_completion: 10,
      native_tokens_reasoning: 2,
      total_cost: simCost(40, 10),
    });
    expect((await ask(sim, id.replace(/\d{8}$/, '99999999'))).status).toBe(404);
  });

  it("refuses (400) a generation another simulator made, or this one before a reset: never another answer's stats by its number", async () => {
    sim = await startSimulator();
    const other = await startSimulator();
    try {
      const mine = await chat(sim);
      const theirs = await chat(other);
      expect(theirs.slice(-8)).toBe(mine.slice(-8)); // both their first answer
      expect(theirs).not.toBe(mine);
      expect((await ask(sim, mine)).status).toBe(200);
      const refused = await ask(sim, theirs);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: { code: 400, message: `Generation ${theirs} was not made by this simulator` } });
      sim.reset();
      const again = await chat(sim);
      expect(again.slice(-8)).toBe(mine.slice(-8));
      expect((await ask(sim, mine)).status).toBe(400);
      expect((await ask(sim, again)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('404 until the stats are ready (readyAfterMs); 401 for a key it does not accept', async () => {
    sim = await startSimulator({ generations: { readyAfterMs: 200, key: 'sk-good' } });
    const id = await chat(sim);
    expect((await ask(sim, id, 'sk-good')).status).toBe(404);
    expect((await ask(sim, id, 'sk-bad')).status).toBe(401);
    expect((await ask(sim, id)).status).toBe(401);
    await new Promise((r) => setTimeout(r, 250));
    expect((await ask(sim, id, 'sk-good')).status).toBe(200);
  });

  it('404 for the first asks of an answer (readyAfterLookups), then its stats', async () => {
    sim = await startSimulator({ generations: { readyAfterLookups: 2 } });
    const id = await chat(sim);
    expect([(await ask(sim, id)).status, (await ask(sim, id)).status, (await ask(sim, id)).status]).toEqual([404, 404, 200]);
  });

  it('remembers the newest `keep` answers; a 4xx it answered instead is no generation', async () => {
    sim = await startSimulator({ generations: { keep: 2 } });
    const ids = [await chat(sim), await chat(sim), await chat(sim)];
    expect(await Promise.all(ids.map(async (id) => (await ask(sim!, id)).status))).toEqual([404, 200, 200]);
    sim.loadScripts({ [MODEL]: [{ kind: 'status', status: 429 }] });
    const res = await fetch(`${sim.baseUrl('openrouter')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(429);
    expect((await ask(sim, ids[0]!.replace(/\d{8}$/, String(4).padStart(8, '0')))).status).toBe(404);
  });
});
