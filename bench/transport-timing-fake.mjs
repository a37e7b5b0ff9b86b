// The fake OpenAI-compatible provider of bench/transport-timing.bench.ts, in its own process so its
// CPU is not the contender's. Faults are keyed by (call, answer number): a call's k-th answer is the
// same for every contender, so retries do not shift the schedule. Control: POST /reset with the
// workload, GET /log for the requests it saw (arrival time, call, answer number, what it sent).
//
//   node bench/transport-timing-fake.mjs   → prints {"port": N} on its first stdout line
import { createServer } from 'node:http';

const DEFAULTS = { mode: 'ok', latencyMs: 0, windowMs: 2000, retryAfter: '1', seed: 1, rates: {}, rateLimitAs503: false };
let cfg = DEFAULTS;
let log = [];
let answers = new Map();
let windowStart = null;

/** A number in [0, 1) from (seed, call, answer): the same fault for every contender. */
function draw(seed, call, k) {
  let h = (seed * 0x9e3779b1) ^ (call * 0x85ebca77) ^ (k * 0xc2b2ae3d);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

function faultOf(call, k, now) {
  if (cfg.mode === 'window') {
    windowStart ??= now;
    return now - windowStart < cfg.windowMs ? '429' : 'ok';
  }
  if (cfg.mode === 'mixed') {
    const u = draw(cfg.seed, call, k);
    let edge = 0;
    for (const [fault, rate] of Object.entries(cfg.rates)) {
      edge += rate;
      if (u < edge) return fault;
    }
  }
  return 'ok';
}

const GOOD = JSON.stringify({ queue: 'billing', confidence: 0.9 });

function completion(content, finish) {
  return JSON.stringify({
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1,
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: finish, logprobs: null }],
    usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62 },
  });
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    if (req.url === '/reset') {
      cfg = { ...DEFAULTS, ...JSON.parse(text) };
      log = [];
      answers = new Map();
      windowStart = null;
      return send(res, 200, '{}');
    }
    if (req.url === '/log') return send(res, 200, JSON.stringify(log));
    const now = performance.now();
    const call = Number(/ticket #(\d+)/.exec(text)?.[1] ?? -1);
    const k = (answers.get(call) ?? 0) + 1;
    answers.set(call, k);
    // call -1: a contender's warm-up, never faulted nor logged
    const fault = call < 0 ? 'ok' : faultOf(call, k, now);
    if (call >= 0) log.push({ t: now, call, k, fault });
    const reply = () => {
      switch (fault) {
        case '429':
          // W3 without the model-wide pause: the same wait, on a status that pauses nothing
          if (cfg.rateLimitAs503)
            return send(res, 503, JSON.stringify({ error: { message: 'Slow down', type: 'server_error', param: null, code: null } }), { 'retry-after': cfg.retryAfter });
          return send(res, 429, JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }), {
            'retry-after': cfg.retryAfter,
          });
        case '500':
          return send(res, 500, JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } }));
        case 'drop':
          return req.socket.destroy();
        case 'invalid':
          return send(res, 200, completion('Sure! {queue: billing, confidence: high}', 'stop'));
        case 'truncated':
          return send(res, 200, completion(GOOD.slice(0, 20), 'length'));
        default:
          return send(res, 200, completion(GOOD, 'stop'));
      }
    };
    if (cfg.latencyMs > 0) setTimeout(reply, cfg.latencyMs);
    else reply();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
