// The provider simulator: a loopback HTTP server speaking the three wire protocols
// (DESIGN: The provider simulator).
// Scripts, chaos and the request log live here; the routes and the plain HTTP in routes.ts, what a
// step sends in replies.ts; the bytes come from render-*.ts and the timing from deliver.ts.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { answerFor } from './answer';
import { Chaos, chaosStep } from './chaos';
import { after, deliver, type Delivery } from './deliver';
import { anthropicRenderer } from './render-anthropic';
import type { RenderCtx, Renderer } from './render-common';
import { geminiRenderer } from './render-gemini';
import { openaiRenderer, simGenerationId } from './render-openai';
import { Generations } from './generations';
import { readAnthropic, readGemini, readOpenAI, type ParseResult, type RequestInfo } from './request-info';
import type { ChaosFault, ChaosProfile, Dialect, Latency, ScriptMap, ScriptStep, SimOptions, SimRequestLog, SimServer } from './types';
import { assertValid, validateChaos, validateScripts } from './validate';
import { isProbeTask, limitedAnswer, limitsOf } from './limits';
import { lastUserTextOf, type SimWorkload } from './workload';
import { answerDelivery, bodyOptions, keepaliveDelivery, redirectReply, single, statusReply } from './replies';
import { badJsonMessage, BASE_PATHS, cleanHeaders, cleanQuery, GEMINI_ROUTE, GENERATION_ROUTE, readBody, ROUTES, sendJson, simBaseUrl, stubInfo } from './routes';

export { simBaseUrl } from './routes';

const RENDERERS: Record<Dialect, Renderer> = {
  openai: openaiRenderer('openai'),
  openrouter: openaiRenderer('openrouter'),
  anthropic: anthropicRenderer,
  gemini: geminiRenderer,
};

const DEFAULT_LOG_LIMIT = 10_000;

interface Picked {
  step: ScriptStep | undefined;
  stepIndex?: number;
  fault?: ChaosFault;
  logged: SimRequestLog['step'];
}

/** 8 hex digits: a simulator's generation tag */
const newGenerationTag = () => randomBytes(4).toString('hex');

class Simulator {
  scripts: ScriptMap = {};
  positions = new Map<string, number>();
  chaos: Chaos | undefined;
  log: SimRequestLog[] = [];
  seq = 0;
  readonly latency: Latency | undefined;
  readonly logLimit: number;
  /** a keyed workload (bench/peers) answers before scripts and chaos */
  readonly workload: SimWorkload | undefined;

  /** structural limits per model (lib/sim/limits.ts): past them an answer that would be ok breaks the schema */
  readonly limits: SimOptions['limits'];
  readonly limitsSeed: number;
  /** the usage of every OpenRouter answer rendered, by generation id (generations.ts) */
  readonly generations: Generations;
  /** in every generation id this simulator mints (simGenerationId): random, new at each reset */
  generationTag = newGenerationTag();

  constructor(opts: SimOptions & { workload?: SimWorkload }) {
    this.generations = new Generations(opts.generations);
    this.limits = opts.limits;
    this.limitsSeed = opts.limitsSeed ?? 1;
    this.latency = opts.latency;
    this.workload = opts.workload;
    this.logLimit = opts.logLimit ?? DEFAULT_LOG_LIMIT;
    if (opts.scripts) this.loadScripts(opts.scripts);
    if (opts.chaos) this.setChaos(opts.chaos);
  }

  loadScripts(scripts: ScriptMap): void {
    assertValid(validateScripts(scripts), 'scripts');
    this.scripts = scripts;
    this.positions.clear();
  }

  setChaos(chaos: ChaosProfile | undefined | null): void {
    assertValid(validateChaos(chaos), 'chaos profile');
    this.chaos = chaos ? new Chaos(chaos) : undefined;
  }

  reset(): void {
    this.scripts = {};
    this.positions.clear();
    this.chaos = undefined;
    this.log = [];
    this.seq = 0;
    this.generations.clear();
    this.generationTag = newGenerationTag(); // seq restarts: the ids minted from here on are new ones
  }

  /** Script (own, then "*") → chaos → ok. Each model keeps its own position, also under "*". */
  pick(info: RequestInfo, body?: unknown): Picked {
    const played = this.workload?.answer({ model: info.model, userText: lastUserTextOf(body) });
    if (played) return { step: played, logged: played.kind };
    // own entries only: a model id "constructor" is not Object.prototype's
    const script = (Object.hasOwn(this.scripts, info.model) ? this.scripts[info.model] : undefined) ?? this.scripts['*'];
    if (script && script.length > 0) {
      const pos = this.positions.get(info.model) ?? 0;
      this.positions.set(info.model, pos + 1);
      const stepIndex = Math.min(pos, script.length - 1);
      const step = script[stepIndex];
      return { step, stepIndex, logged: step.kind };
    }
    if (this.chaos) {
      const { fault, sub } = this.chaos.pick();
      // a probe task of a model with declared limits breaks its schema by those limits, not by chaos's `invalid`
      const limited = !fault || fault === 'invalid' ? this.limited(info, body) : undefined;
      if (limited && (!fault || isProbeTask(lastUserTextOf(body)))) return limited;
      if (!fault) return { step: undefined, logged: 'chaos_ok' };
      const step = chaosStep(fault, sub, info.dialect, info.stream);
      return { step, fault, logged: step.kind };
    }
    return this.limited(info, body) ?? { step: undefined, logged: 'ok' };
  }

  /** An ok answer of a model with declared structural limits: broken past them (logged `invalid`). */
  limited(info: RequestInfo, body: unknown): Picked | undefined {
    const limits = limitsOf(this.limits, info.model);
    if (!limits || !info.schema) return undefined;
    const a = limitedAnswer(limits, info.schema, lastUserTextOf(body), this.limitsSeed, info.model);
    return a ? { step: { kind: 'ok', json: a.json }, logged: a.broken ? 'invalid' : 'ok' } : undefined;
  }

  record(entry: Omit<SimRequestLog, 'seq'>): number {
    const seq = ++this.seq;
    this.log.push({ seq, ...entry });
    // Drop the oldest entries in batches so a long benchmark stays O(1) per request.
    if (this.log.length > this.logLimit * 1.1) this.log.splice(0, this.log.length - this.logLimit);
    return seq;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const arrivedAt = Date.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);

    if (path.startsWith('/_sim/')) return this.control(req, res, path);
    if (path === GENERATION_ROUTE && req.method === 'GET') return this.generations.serve(req, res, query, this.generationTag);

    let dialect = ROUTES.get(path);
    let geminiModel = '';
    let geminiStream = false;
    if (!dialect) {
      const m = GEMINI_ROUTE.exec(path);
      if (m) {
        dialect = 'gemini';
        geminiModel = decodeURIComponent(m[1]);
        geminiStream = m[2] === 'streamGenerateContent';
      }
    }
    if (!dialect || req.method !== 'POST') return this.notFound(req, res, path, dialect);

    const d = dialect;
    readBody(req, res, (text) => {
      const renderer = RENDERERS[d];
      const base = { method: 'POST', path, dialect: d, headers: cleanHeaders(req.headers), arrivedAt, query: cleanQuery(query) };
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      let parsed: ParseResult;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        parsed = { ok: false, message: badJsonMessage(d) };
      } else {
        const b = body as Record<string, unknown>;
        parsed =
          d === 'anthropic'
            ? readAnthropic(b, req.headers['anthropic-version'] as string | undefined)
            : d === 'gemini'
              ? readGemini(geminiModel, geminiStream, /(^|&)alt=sse(&|$)/.test(query), b)
              : readOpenAI(d, b);
      }
      if (!parsed.ok) {
        const model = d === 'gemini' ? geminiModel : typeof (body as { model?: unknown } | undefined)?.model === 'string' ? (body as { model: string }).model : '';
        const seq = this.record({ ...base, model, stream: geminiStream, body: body ?? text, step: 'status' });
        const reply = renderer.error(
          400,
          { message: parsed.message, param: parsed.param },
          { info: stubInfo(d, model), seq, tag: this.generationTag, created: Math.floor(arrivedAt / 1000) },
        );
        return deliver(res, single(reply, 0));
      }
      const info = parsed.info;
      const picked = this.pick(info, body);
      const seq = this.record({
        ...base,
        model: info.model,
        stream: info.stream,
        body,
        step: picked.logged,
        ...(picked.stepIndex !== undefined ? { stepIndex: picked.stepIndex } : {}),
        ...(picked.fault ? { fault: picked.fault } : {}),
      });
      this.respond(res, renderer, { info, seq, tag: this.generationTag, created: Math.floor(arrivedAt / 1000) }, picked.step);
    });
  }

  respond(res: ServerResponse, renderer: Renderer, ctx: RenderCtx, step: ScriptStep | undefined): void {
    const latency = step?.latency ?? this.latency;
    // SSE streams (a gemini stream without alt=sse is a JSON array: a body)
    const sse = ctx.info.stream && !ctx.info.geminiArray;
    const send = (d: Delivery) => deliver(res, bodyOptions(d, step, sse));
    if (step?.kind === 'status') return send(single(statusReply(step, renderer, ctx), latency?.first_token_ms ?? 0));
    if (step?.kind === 'redirect') return send(single(redirectReply(step), latency?.first_token_ms ?? 0));

    if (step?.kind === 'drop' && (step.when ?? 'before') === 'before') {
      return after(res, latency?.first_token_ms ?? 0, () => res.socket?.destroy());
    }

    const answer = answerFor(ctx.info, step);
    // generated, so billed — even if its bytes are then dropped or cut
    if (ctx.info.dialect === 'openrouter') {
      this.generations.remember({
        id: simGenerationId(ctx.tag, ctx.seq),
        model: ctx.info.model,
        usage: answer.usage,
        streamed: ctx.info.stream,
        finishReason: answer.finish,
        at: Date.now(),
      });
    }
    if (step?.kind === 'keepalive') return send(keepaliveDelivery(step, answer, renderer, ctx, latency, sse));
    return send(answerDelivery(step, answer, renderer, ctx, latency));
  }

  notFound(req: IncomingMessage, res: ServerResponse, path: string, dialect: Dialect | undefined): void {
    // Drain the body first so the connection stays usable.
    req.resume();
    req.once('end', () => {
      const message = `Not found: ${req.method} ${path}`;
      const d = dialect ?? (Object.keys(BASE_PATHS) as Dialect[]).find((x) => path.startsWith(BASE_PATHS[x] + '/'));
      if (!d) return sendJson(res, 404, { error: { message, code: 404 } });
      const reply = RENDERERS[d].error(404, { message }, { info: stubInfo(d, ''), seq: 0, tag: this.generationTag, created: 0 });
      deliver(res, single(reply, 0));
    });
  }

  control(req: IncomingMessage, res: ServerResponse, path: string): void {
    const route = `${req.method} ${path}`;
    if (route === 'GET /_sim/requests') {
      req.resume();
      return sendJson(res, 200, this.log);
    }
    if (route !== 'POST /_sim/scripts' && route !== 'POST /_sim/chaos' && route !== 'POST /_sim/reset') {
      req.resume();
      return sendJson(res, 404, { error: { message: `Not found: ${route}`, code: 404 } });
    }
    readBody(req, res, (text) => {
      if (route === 'POST /_sim/reset') {
        this.reset();
        return sendJson(res, 200, { ok: true });
      }
      let body: unknown;
      try {
        body = text.trim() === '' ? null : JSON.parse(text);
      } catch {
        return sendJson(res, 400, { error: { message: 'body is not valid JSON', code: 400 } });
      }
      const errs = route === 'POST /_sim/scripts' ? validateScripts(body) : validateChaos(body);
      if (errs.length > 0) return sendJson(res, 400, { error: { message: errs.join('; '), details: errs, code: 400 } });
      if (route === 'POST /_sim/scripts') this.loadScripts(body as ScriptMap);
      else this.setChaos(body as ChaosProfile | null);
      sendJson(res, 200, { ok: true });
    });
  }
}

export async function startSimulator(opts: SimOptions & { workload?: SimWorkload } = {}): Promise<SimServer> {
  const sim = new Simulator(opts);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => sim.handle(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  // A client that drops a stalled request must not crash the server.
  server.on('clientError', (_err, socket) => socket.destroy());

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : (opts.port ?? 0);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    port,
    baseUrl: (dialect) => simBaseUrl(url, dialect),
    loadScripts: (scripts) => sim.loadScripts(scripts),
    setChaos: (chaos) => sim.setChaos(chaos),
    requests: () => sim.log.slice(),
    reset: () => sim.reset(),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Stalled and keep-alive connections would hold close() open: end them now.
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
