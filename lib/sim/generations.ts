// OpenRouter's generation stats (DESIGN: The provider simulator; Usage unknown, never zero): the
// OpenRouter flavour remembers the usage of every answer it rendered by its generation id — an
// answer whose body it then dropped was billed all the same — and serves
// `GET {base}/generation?id=` in OpenRouter's shape, 404 for an id it does not know (yet).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer } from './answer';
import { simCost, simGenerationPrefix } from './render-openai';
import { JSON_TYPE } from './render-common';
import type { SimGenerationOptions } from './types';

interface Generation {
  id: string;
  model: string;
  usage: Answer['usage'];
  streamed: boolean;
  finishReason: string;
  /** Date.now() when the answer was rendered */
  at: number;
  /** how often its stats were asked for */
  asked?: number;
}

const DEFAULT_KEEP = 10_000;

function send(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export class Generations {
  private readonly byId = new Map<string, Generation>();
  private readonly keep: number;

  constructor(private readonly opts: SimGenerationOptions = {}) {
    this.keep = opts.keep ?? DEFAULT_KEEP;
  }

  /** an answer rendered (whatever then became of its bytes) */
  remember(g: Generation): void {
    this.byId.delete(g.id);
    this.byId.set(g.id, g);
    // a Map iterates in insertion order: the oldest go first
    for (const id of this.byId.keys()) {
      if (this.byId.size <= this.keep) break;
      this.byId.delete(id);
    }
  }

  clear(): void {
    this.byId.clear();
  }

  /** `GET …/generation?id=`; `tag`: the simulator's generation tag now (an id minted under another is refused, 400) */
  serve(req: IncomingMessage, res: ServerResponse, query: string, tag: string, now = Date.now()): void {
    req.resume();
    const auth = req.headers.authorization ?? '';
    if (this.opts.key !== undefined && auth !== `Bearer ${this.opts.key}`) {
      return send(res, 401, { error: { code: 401, message: auth ? 'User not found.' : 'No auth credentials found' } });
    }
    const id = new URLSearchParams(query).get('id') ?? '';
    if (!id) return send(res, 400, { error: { code: 400, message: 'Missing generation id' } });
    // another simulator's (or this one's before a reset): never this one's, whatever its number
    if (!id.startsWith(simGenerationPrefix(tag))) return send(res, 400, { error: { code: 400, message: `Generation ${id} was not made by this simulator` } });
    const g = this.byId.get(id);
    if (g) g.asked = (g.asked ?? 0) + 1;
    const ready = g && now - g.at >= (this.opts.readyAfterMs ?? 0) && g.asked! > (this.opts.readyAfterLookups ?? 0);
    if (!ready) return send(res, 404, { error: { code: 404, message: `Generation ${id} not found` } });
    const completion = g.usage.output + g.usage.thoughts;
    send(res, 200, {
      data: {
        id: g.id,
        model: g.model,
        created_at: new Date(g.at).toISOString(),
        streamed: g.streamed,
        cancelled: false,
        provider_name: 'Simulated',
        finish_reason: g.finishReason,
        native_finish_reason: g.finishReason,
        tokens_prompt: g.usage.input,
        tokens_completion: completion,
        native_tokens_prompt: g.usage.input,
        native_tokens_completion: completion,
        native_tokens_reasoning: g.usage.thoughts,
        total_cost: simCost(g.usage.input, completion),
        usage: simCost(g.usage.input, completion),
        is_byok: false,
      },
    });
  }
}
