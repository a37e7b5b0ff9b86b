// `aqven serve [--host H] [--port P] [--project DIR] [--simulate] [--public-url URL]` (DESIGN: CLI;
// The dashboard): the built dashboard in this process, a Node http server over Next.js's
// programmatic API. Each request carries its socket's address in `x-aqven-peer`, signed with a key
// made in this process (lib/shared/peer.ts; a client's own values are overwritten): the app believes
// a peer only when the signature verifies, so plain `next start` never has one. Beyond loopback it listens only once a user exists and a public URL names the host it answers.
// Once its arguments and settings pass, it says what happens as log lines on stdout (lib/observe:
// JSON, or AQVEN_LOG_FORMAT=pretty): building, listening (the URL line), request refusals, every
// run's lines, stopping; a refusal before that is one line on stderr.
// Exit statuses: 1 the dashboard cannot be built, started or bound; 2 bad usage or a refusal (before
// listening); 3 the database cannot be opened or reached; 130/143 stopped by SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { anyUser } from '@/db/account-queries';
import { AuthSecretError, authSecretForEnv } from '@/db/auth-secret';
import { interruptAll } from '@/lib/flow/active-runs';
import { simulateRequested } from '@/lib/flow/simulate';
import { errorField, LogSettingError, logSettings } from '@/lib/observe/logger';
import { startLogs, type ProcessLogs } from '@/lib/observe/logs';
import { processMetrics } from '@/lib/observe/process-metrics';
import { armPeerStamps, forwarded, PEER_HEADER, PEER_SIG_HEADER, peerStamp, stampFacts } from '@/lib/shared/peer';
import { commandTracing, type Tracing } from './command-tracing';
import { type CliIo, processIo } from './io';
import { PROJECT_DEFAULT, resolveProjectDir } from './project-dir';
import { EXIT_USAGE, exitFor, SIGNAL_EXIT } from './exit';
import { withAccountsDb, type AccountCommandOptions } from './users';
import { UsageError } from './usage-error';

type Env = Record<string, string | undefined>;

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3000;
export { PEER_HEADER };
/** exit 1: the dashboard could not be built, started or bound to its address */
export const EXIT_START_FAILED = 1;
/** after a stop signal, the longest wait for the dashboard's session to record its runs and exit (it waits up to 3 s for them) */
const STOP_GRACE_MS = 5_000;

export const NO_USER_REFUSAL = 'aqven serve: no user exists yet, so the dashboard only listens on loopback; create one first: aqven user add NAME --role admin';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface ServeOptions extends AccountCommandOptions {
  host?: string;
  port?: string;
  simulate?: boolean;
  publicUrl?: string;
}

/** The checkout the CLI runs from: the dashboard's sources and its `.next` build live there. */
export function repoRoot(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

/** 127.0.0.0/8, ::1 (and IPv4-mapped 127/8) or `localhost`: reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  if (h === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  const bare = h.replace(/^\[(.*)\]$/, '$1');
  if (!bare.includes(':')) return false;
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname; // writes every IPv6 address one way
  } catch {
    return false;
  }
  return canonical === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

const isWildcard = (host: string) => ['0.0.0.0', '::', '[::]'].includes(host.trim());
const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** idle keep-alive connections are kept this long (Node's 5 s default races a client reusing one after a pause) */
export const KEEP_ALIVE_MS = 120_000;

/** A request's headers as the client sent them, read as a Headers-like bag. */
function rawHeaders(req: IncomingMessage): { get(name: string): string | null } {
  return { get: (name) => (req.headers[name] === undefined ? null : String(req.headers[name])) };
}

/**
 * Overwrites `x-aqven-peer` and its signature with the socket's address, signed with this
 * process's key: whatever the client sent under those names is gone.
 */
export function stampPeer(req: IncomingMessage): void {
  const stamp = peerStamp(stampFacts(req.socket.remoteAddress ?? '', rawHeaders(req)));
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    const name = raw[i]!.toLowerCase();
    if (name === PEER_HEADER || name === PEER_SIG_HEADER) raw.splice(i, 2);
  }
  for (const [name, value] of Object.entries(stamp)) {
    req.headers[name] = value;
    raw.push(name, value);
  }
}

/** The warning for a proxy's headers arriving while AQVEN_TRUST_PROXY is unset: such a request is never taken for this machine. */
export const UNTRUSTED_PROXY_WARNING =
  'aqven serve: a request came through a proxy (X-Forwarded-For, Forwarded or X-Forwarded-Host) but AQVEN_TRUST_PROXY is not set: such requests count as coming from an unknown address (never this machine, no sign-in from an unknown address). Set AQVEN_TRUST_PROXY=1 if the proxy is yours and sets X-Forwarded-For.';

/** A request the dashboard refused (a 4xx other than 404), as a log line tells it: never its query, headers or body. */
export interface Refusal {
  method: string;
  path: string;
  status: number;
}

/**
 * The http server of the dashboard: every request stamped with its peer, then handed to `handler`
 * (requests that come before Next.js is ready wait for it). `onWarning` hears, once, of the first
 * request that came through a proxy the environment does not trust; `onRefusal` of each request
 * answered 4xx but 404 (a missing page is no refusal).
 */
export function dashboardServer(
  handler: Promise<Handler>,
  onError: (err: unknown) => void = () => undefined,
  opts: { trustProxy?: boolean; onWarning?: (text: string) => void; onRefusal?: (r: Refusal) => void } = {},
): Server {
  armPeerStamps();
  handler.catch(() => undefined); // a start that failed is said by whoever started it; each request answers 500
  let warned = false;
  const onRefusal = opts.onRefusal;
  const server = createServer((req, res) => {
    stampPeer(req);
    if (onRefusal) {
      res.once('finish', () => {
        const status = res.statusCode;
        if (status >= 400 && status < 500 && status !== 404) onRefusal({ method: req.method ?? '', path: (req.url ?? '').split(/[?#]/, 1)[0]!, status });
      });
    }
    if (!warned && !opts.trustProxy && forwarded(rawHeaders(req))) {
      warned = true;
      opts.onWarning?.(UNTRUSTED_PROXY_WARNING);
    }
    handler
      .then((handle) => handle(req, res))
      .catch((err: unknown) => {
        onError(err);
        if (res.headersSent) res.destroy();
        else res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
      });
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}

function parsePort(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535, got "${raw}"`);
  return n;
}

function parsePublicUrl(raw: string | undefined): string | null {
  const text = raw?.trim();
  if (!text) return null;
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // said below
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    throw new UsageError(`the public URL must be an http(s) URL such as http://aqven.example.com:3000, got "${text}"`);
  }
  return text;
}

/** `node_modules/next`'s own command line, as `next build` runs it. */
function nextBin(): string {
  return createRequire(import.meta.url).resolve('next/dist/bin/next');
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * SIGINT/SIGTERM close the server and end the process (130/143) once the runs of this process have
 * recorded themselves interrupted (the dashboard's session stops them too: lib/server/session.ts)
 * and their spans are sent — for at most STOP_GRACE_MS; a second signal ends it at once. This
 * handler stays registered, so the session's leaves the exiting to it.
 */
function stopOnSignals(server: Server, logs: ProcessLogs, tracing: Tracing | null): void {
  let stopping = false;
  const stop = (sig: 'SIGINT' | 'SIGTERM') => {
    const code = SIGNAL_EXIT[sig];
    if (stopping) process.exit(code);
    stopping = true;
    logs.log.info({ signal: sig }, `${sig}: the dashboard stops`);
    server.close();
    server.closeAllConnections();
    // Next.js keeps handles of its own open: the process ends here rather than when they close
    const grace = setTimeout(() => process.exit(code), STOP_GRACE_MS);
    void interruptAll(`stopped by ${sig}`)
      .then(() => tracing?.shutdown())
      .finally(() => {
        clearTimeout(grace);
        process.exit(code);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * PostgreSQL mode without AQVEN_AUTH_SECRET (or with one too short): refused before anything is
 * built or bound, as the dashboard would refuse every sign-in (DESIGN: The dashboard, Sessions).
 */
function refusalWithoutAuthSecret(env: Env, io: CliIo): number {
  try {
    authSecretForEnv(env);
    return 0;
  } catch (err) {
    // an AQVEN_DATABASE_URL naming no database (DatabaseUrlError) is bad configuration too: exit 2
    return exitFor(err, (text) => io.err(`aqven serve: ${text}\n`), [[[AuthSecretError], EXIT_USAGE]]);
  }
}

/** Refusals before listening beyond loopback: no user yet (anyone could act as admin), or no public URL (every request would get 421). */
async function refusalBeyondLoopback(host: string, port: number, publicUrl: string | null, opts: ServeOptions, io: CliIo): Promise<number> {
  let users = false;
  const opened = await withAccountsDb('serve', opts, io, async (db) => {
    users = await anyUser(db);
    return 0;
  });
  if (opened !== 0) return opened;
  if (!users) {
    io.err(`${NO_USER_REFUSAL}\n`);
    return EXIT_USAGE;
  }
  if (!publicUrl) {
    const example = `http://${isWildcard(host) ? 'HOST' : urlHost(host)}:${port}`;
    io.err(
      `aqven serve: the dashboard answers only requests for its public URL's host, and none is set for --host ${host}: pass --public-url ${example} (the name browsers use to reach it), or set AQVEN_PUBLIC_URL\n`,
    );
    return EXIT_USAGE;
  }
  return 0;
}

/**
 * Runs `next build` in the checkout when it has no build yet. Resolves true when there is a build,
 * else false (said on stderr), or with the signal that stopped the build: SIGINT/SIGTERM sent to
 * this process are passed on to the build, so no build outlives the command.
 */
async function ensureBuilt(root: string, logs: ProcessLogs): Promise<boolean | 'SIGINT' | 'SIGTERM'> {
  if (existsSync(join(root, '.next', 'BUILD_ID'))) return true;
  logs.log.info(`the dashboard is not built yet (no ${join(root, '.next', 'BUILD_ID')}): running next build first, which takes a few minutes`);
  // next build's report goes to stderr, beside the other news of this command
  const build = spawn(process.execPath, [nextBin(), 'build'], { cwd: root, stdio: ['ignore', 2, 2], env: process.env });
  let stoppedBy: 'SIGINT' | 'SIGTERM' | null = null;
  const pass = (sig: 'SIGINT' | 'SIGTERM') => {
    stoppedBy = sig;
    build.kill(sig);
  };
  process.on('SIGINT', pass).on('SIGTERM', pass);
  try {
    // null when it built; else why not (the first of 'error' and 'close' settles it)
    const failure = await new Promise<string | null>((resolve) => {
      build.once('error', (err) => resolve(err.message));
      build.once('close', (code, signal) => resolve(code === 0 ? null : code === null ? `stopped by ${signal}` : `exit ${code}`));
    });
    if (stoppedBy) return stoppedBy;
    if (failure === null) return true;
    logs.log.error(`next build failed (${failure}); the dashboard was not started`);
    return false;
  } finally {
    process.off('SIGINT', pass).off('SIGTERM', pass);
  }
}

/** `aqven serve`: resolves with an exit status when it cannot start; once listening, it ends only by a signal. */
export async function runServe(opts: ServeOptions, io: CliIo = processIo): Promise<number> {
  const env: Env = opts.env ?? process.env;
  let host: string, port: number, publicUrl: string | null;
  try {
    host = opts.host?.trim() || DEFAULT_HOST;
    port = parsePort(opts.port ?? env.PORT ?? String(DEFAULT_PORT));
    publicUrl = parsePublicUrl(opts.publicUrl ?? env.AQVEN_PUBLIC_URL);
    logSettings(env); // AQVEN_LOG_FORMAT and AQVEN_LOG_LEVEL
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof LogSettingError)) throw err;
    io.err(`aqven serve: ${err.message}\n`);
    return EXIT_USAGE;
  }
  const noKey = refusalWithoutAuthSecret(env, io);
  if (noKey !== 0) return noKey;
  if (!isLoopbackHost(host)) {
    const refused = await refusalBeyondLoopback(host, port, publicUrl, opts, io);
    if (refused !== 0) return refused;
  }

  const root = repoRoot();
  const projectDir = resolveProjectDir(opts.project, env);
  // the dashboard runs in this process: its settings are this process's environment
  Object.assign(process.env, {
    AQVEN_PROJECT: projectDir,
    // the checkout the app is served from: /docs reads its docs/ (lib/server/docs.ts), whatever the working directory
    AQVEN_ROOT: process.env.AQVEN_ROOT || root,
    ...(opts.simulate ? { AQVEN_SIMULATE: '1' } : {}),
    ...(publicUrl ? { AQVEN_PUBLIC_URL: publicUrl } : {}),
    NODE_ENV: process.env.NODE_ENV || 'production',
  });
  const logs = startLogs({ name: 'aqven serve', env, write: (line) => io.out(line), terminal: io === processIo && process.stdout.isTTY, console: io === processIo });
  logs.log.info({ host, port, project: projectDir, simulated: simulateRequested(opts.simulate) }, `starting on ${urlHost(host)}:${port} (project ${projectDir})`);
  const started = await startDashboard(root, { host, port, publicUrl, projectDir, simulate: opts.simulate, env }, logs);
  if (started !== null) logs.stop();
  return started ?? new Promise<number>(() => undefined); // ended by stopOnSignals
}

/** Builds if need be, listens, starts Next.js: null once it answers (it ends by a signal), else the exit status. */
async function startDashboard(
  root: string,
  o: { host: string; port: number; publicUrl: string | null; projectDir: string; simulate?: boolean; env: Env },
  logs: ProcessLogs,
): Promise<number | null> {
  const { host, port, publicUrl, projectDir, env } = o;
  const { log, safe } = logs;
  const built = await ensureBuilt(root, logs);
  if (built !== true) return built === false ? EXIT_START_FAILED : SIGNAL_EXIT[built];

  let ready!: (handle: Handler) => void;
  let failed!: (err: unknown) => void;
  const handler = new Promise<Handler>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  const server = dashboardServer(handler, (err) => log.error({ err: errorField(err, safe, { stack: true }) }, `a request failed: ${errorField(err, safe).message}`), {
    trustProxy: env.AQVEN_TRUST_PROXY === '1',
    onWarning: (text) => log.warn(text),
    onRefusal: (r) => log.warn(r, `${r.method} ${r.path} refused: ${r.status}`),
  });
  // the runs' spans, when the environment asks for traces: from the first run on
  const tracing = await commandTracing((line) => log.warn(line));
  let bound: number;
  try {
    bound = await listen(server, port, host);
  } catch (err) {
    log.error(`cannot listen on ${urlHost(host)}:${port}: ${(err as Error).message}`);
    await tracing?.shutdown();
    return EXIT_START_FAILED;
  }
  // the metrics GET /metrics reads, counting from the first run on (the route finds them on globalThis)
  processMetrics();
  try {
    // only this command loads Next.js; the hostname and the port it is told are the ones bound
    const { default: next } = await import('next');
    const app = next({ dev: false, dir: root, hostname: host, port: bound });
    await app.prepare();
    ready(app.getRequestHandler());
  } catch (err) {
    failed(err);
    log.error({ err: errorField(err, safe, { stack: true }) }, `the dashboard did not start: ${errorField(err, safe).message}`);
    server.close();
    server.closeAllConnections();
    await tracing?.shutdown();
    return EXIT_START_FAILED;
  }
  stopOnSignals(server, logs, tracing);
  const local = `http://${urlHost(host)}:${bound}`;
  const simulated = simulateRequested(o.simulate);
  const answers = isLoopbackHost(host) ? `${local}/runs` : `${publicUrl} (listening on ${urlHost(host)}:${bound})`;
  // the line other tools look for: the same words in both formats
  log.info(
    { url: isLoopbackHost(host) ? `${local}/runs` : publicUrl, listening: `${urlHost(host)}:${bound}`, project: projectDir, simulated },
    `AQVEN dashboard: ${answers}  (project ${projectDir}${simulated ? ', simulated providers' : ''})`,
  );
  return null;
}

export function registerServe(program: Command, io: CliIo = processIo): Command {
  return program
    .command('serve')
    .description('serve the built dashboard (building it first when there is no build); loopback only until a user exists')
    .option('--host <host>', `address to listen on (default ${DEFAULT_HOST}); beyond loopback needs a user and --public-url`)
    .option('--port <port>', `port (default $PORT, then ${DEFAULT_PORT}; 0 picks a free one)`)
    .option('--project <dir>', `the project the dashboard serves (${PROJECT_DEFAULT}); its aqven.yaml names the SQLite database unless AQVEN_DATABASE_URL is set`)
    .option('--simulate', 'route every provider to the simulator (also AQVEN_SIMULATE=1)')
    .option('--public-url <url>', 'the URL browsers use (also AQVEN_PUBLIC_URL): the dashboard answers only its host and loopback')
    .action(async (opts: ServeOptions) => io.exit(await runServe(opts, io)));
}
