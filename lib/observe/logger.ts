// The structured logs of the long-lived commands (DESIGN: Observability, "Logs"): `aqven serve` and
// `aqven worker` say what happens as one JSON object per line on stdout (pino), or as one human
// line per entry (pino-pretty): AQVEN_LOG_FORMAT=json or pretty, and when it is unset, pretty on a
// terminal and JSON anywhere else (a pipe, a file, a container's log). Both are formatted in this
// process and written synchronously to the command's own output: no worker thread, and nothing is
// lost when the process exits at once after a signal.
//
// Never a key, a password or unredacted failure text (DESIGN: Redaction): fields that name a secret
// are censored by pino's `redact` paths; every line is scrubbed of the values of the environment's
// secret variables as it is written; free text — an error's message, a provider's words — goes
// through `safe`: the secrets and URL credentials scrubbed, the five detectors of lib/redact, cut.
import pino, { type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { scrubSecret, stripUrlCredentials } from '@/lib/engine/secrets';
import { DEFAULT_EXTRA_PLACEHOLDER, redact } from '@/lib/redact';
import { escapeUnprintable } from '@/lib/shared/unprintable';

export type { Logger };

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** Free text in a line is cut to this many characters (a stored failure text may be 64 KiB). */
export const LOG_TEXT_MAX_CHARS = 1000;

/** What a censored field or a scrubbed secret reads as. */
export const LOG_SECRET_MARK = DEFAULT_EXTRA_PLACEHOLDER;

/**
 * Fields that hold a secret wherever an object is logged, censored by pino (fast-redact): at the top
 * of an entry or one object down, and request headers.
 */
export const SECRET_FIELDS = ['apiKey', 'password', 'secret', 'token', 'authorization', 'cookie'] as const;
const SECRET_PATHS = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  ...['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'].flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`]),
];

/** An environment variable whose name says it holds a secret: its value is scrubbed from every line. */
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK/i; // a webhook URL is a secret (alerts: url_env ends in _WEBHOOK_URL or _WEBHOOK)
/** Shorter values are not looked for (they would match ordinary words: `true`, `1`). */
export const SECRET_VALUE_MIN = 8;

/** AQVEN_LOG_FORMAT or AQVEN_LOG_LEVEL holds a value we do not know (said naming the variable; exit 2). */
export class LogSettingError extends Error {}

export interface LogSettings {
  format: LogFormat;
  level: LogLevel;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  const v = raw?.trim().toLowerCase();
  if (!v) return fallback;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new LogSettingError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
}

/**
 * The log settings of the environment: AQVEN_LOG_FORMAT (json, pretty; unset: pretty when the lines
 * go to a terminal, else json) and AQVEN_LOG_LEVEL (default info).
 */
export function logSettings(env: Record<string, string | undefined>, o: { terminal?: boolean } = {}): LogSettings {
  return {
    format: oneOf('AQVEN_LOG_FORMAT', env.AQVEN_LOG_FORMAT, LOG_FORMATS, o.terminal ? 'pretty' : 'json'),
    level: oneOf('AQVEN_LOG_LEVEL', env.AQVEN_LOG_LEVEL, LOG_LEVELS, DEFAULT_LOG_LEVEL),
  };
}

/** The secret values of `env`: those of variables named like a secret, and the password of any URL with credentials. */
export function envSecrets(env: Record<string, string | undefined>): string[] {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (SECRET_NAME.test(name)) found.add(value);
    if (value.includes('@') && value.includes('://')) {
      try {
        const { password } = new URL(value);
        if (password) found.add(password).add(decodeURIComponent(password));
      } catch {
        // not a URL
      }
    }
  }
  return [...found].filter((v) => v.length >= SECRET_VALUE_MIN).sort((a, b) => b.length - a.length);
}

/** A secret as it appears inside a JSON string (a quote or a backslash in it is escaped there). */
const asInJson = (s: string) => JSON.stringify(s).slice(1, -1);

/** `line` with every secret (and its JSON-escaped form) replaced. */
function scrubLine(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) {
    for (const form of new Set([s, asInJson(s)])) if (out.includes(form)) out = out.split(form).join(LOG_SECRET_MARK);
  }
  return out;
}

export interface ProcessLogger {
  log: Logger;
  /**
   * Free text fit for a line: the secrets and URL credentials scrubbed, emails, IBANs, cards, phones
   * and IP addresses redacted (lib/redact), cut to LOG_TEXT_MAX_CHARS; in pretty mode one line of
   * printable characters (a terminal obeys none of it).
   */
  safe(text: string): string;
  format: LogFormat;
}

export interface LoggerOptions {
  /** the command: `aqven serve`, `aqven worker` (pino's `name`) */
  name: string;
  env: Record<string, string | undefined>;
  /** where each line goes, ending in a newline (the command's stdout) */
  write: (line: string) => void;
  /** the lines go to a terminal: pretty unless AQVEN_LOG_FORMAT says otherwise, the level coloured */
  terminal?: boolean;
  /** more secret values to scrub from every line (a provider's key held under another name) */
  secrets?: readonly (string | undefined)[];
  /** fields every line of the process carries (a worker's id) */
  bindings?: Record<string, unknown>;
}

/** The one logger factory of the long-lived commands; throws LogSettingError for a bad AQVEN_LOG_FORMAT or AQVEN_LOG_LEVEL. */
export function createLogger(o: LoggerOptions): ProcessLogger {
  const { format, level } = logSettings(o.env, { terminal: o.terminal });
  const secrets = [...new Set([...envSecrets(o.env), ...(o.secrets ?? []).filter((s): s is string => !!s && s.length >= SECRET_VALUE_MIN)])].sort((a, b) => b.length - a.length);
  const pretty =
    format === 'pretty'
      ? prettyFactory({ colorize: o.terminal === true, singleLine: true, errorLikeObjectKeys: ['err'], translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
      : null;
  const destination = { write: (line: string) => o.write(pretty ? pretty(line) : line) };
  const root = pino(
    {
      name: o.name,
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: SECRET_PATHS, censor: LOG_SECRET_MARK },
      hooks: { streamWrite: (line) => scrubLine(line, secrets) },
    },
    destination,
  );
  const log = o.bindings ? root.child(o.bindings) : root;
  const safe = (text: string): string => {
    // as the engine scrubs failure text (lib/engine/attempt-scrub.ts): the secrets first (a detector could
    // rewrite part of one and hide the rest), then the detectors, then the cut, which leaves no part of a secret
    const keyless = scrubSecret(stripUrlCredentials(text), secrets, { mark: LOG_SECRET_MARK });
    const clean = scrubSecret(redact(keyless), secrets, { max: LOG_TEXT_MAX_CHARS, mark: LOG_SECRET_MARK });
    return pretty ? escapeUnprintable(clean) : clean;
  };
  return { log, safe, format };
}

/**
 * An error as a line's `err` field: its kind and message, made safe; its stack (made safe and cut
 * as well) only when asked for — for a fault of our own, where the place is what a reader needs.
 */
export function errorField(err: unknown, safe: (text: string) => string, o: { stack?: boolean } = {}): { type: string; message: string; stack?: string } {
  if (!(err instanceof Error)) return { type: typeof err, message: safe(String(err)) };
  return { type: err.name, message: safe(err.message), ...(o.stack && err.stack ? { stack: safe(err.stack) } : {}) };
}
