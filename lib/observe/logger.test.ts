// The logger of `aqven serve` and `aqven worker` (DESIGN: Observability, "Logs"): JSON lines by
// default, human lines with AQVEN_LOG_FORMAT=pretty, AQVEN_LOG_LEVEL, bad settings named, and no
// secret in any line whichever way it comes in.
import { describe, expect, it } from 'vitest';
import { createLogger, envSecrets, LOG_SECRET_MARK, LOG_TEXT_MAX_CHARS, LogSettingError, logSettings } from './logger';

function capture(env: Record<string, string | undefined> = {}, extra: { secrets?: string[]; bindings?: Record<string, unknown> } = {}) {
  const lines: string[] = [];
  const p = createLogger({ name: 'aqven test', env, write: (l) => lines.push(l), ...extra });
  return { ...p, lines, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('the process logger', () => {
  it('writes one JSON object per line: level by name, ISO time, the command, the message and the fields', () => {
    const c = capture({}, { bindings: { worker: 'w-1' } });
    c.log.info({ runId: 'r1', usage: { inputTokens: 3 } }, 'run r1 triage started');
    c.log.debug('not at info');
    expect(c.lines).toHaveLength(1);
    expect(c.lines[0]!.endsWith('\n')).toBe(true);
    const [line] = c.json();
    expect(line).toMatchObject({ level: 'info', name: 'aqven test', worker: 'w-1', runId: 'r1', usage: { inputTokens: 3 }, msg: 'run r1 triage started' });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it('AQVEN_LOG_LEVEL chooses what is written; AQVEN_LOG_FORMAT=pretty writes human lines', () => {
    const debug = capture({ AQVEN_LOG_LEVEL: 'debug' });
    debug.log.debug('a try failed');
    expect(debug.json()[0]).toMatchObject({ level: 'debug', msg: 'a try failed' });
    const warn = capture({ AQVEN_LOG_LEVEL: 'WARN' });
    warn.log.info('quiet');
    warn.log.warn('loud');
    expect(warn.json().map((l) => l.msg)).toEqual(['loud']);

    const pretty = capture({ AQVEN_LOG_FORMAT: 'pretty' });
    pretty.log.info({ runId: 'r1' }, 'AQVEN dashboard: http://127.0.0.1:3000/runs  (project /p)');
    expect(pretty.lines).toHaveLength(1);
    const [text] = pretty.lines;
    expect(() => JSON.parse(text!)).toThrow();
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(aqven test\): AQVEN dashboard: http:\/\/127\.0\.0\.1:3000\/runs {2}\(project \/p\) \{"runId":"r1"\}\n$/);
    expect(text).not.toContain('\x1b'); // no colour unless asked for (a terminal)
  });

  it('refuses a format or level it does not know, naming the variable', () => {
    expect(() => logSettings({ AQVEN_LOG_FORMAT: 'xml' })).toThrow(new LogSettingError('AQVEN_LOG_FORMAT must be one of json, pretty, got "xml"'));
    expect(() => logSettings({ AQVEN_LOG_LEVEL: 'verbose' })).toThrow(/^AQVEN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"$/);
    expect(logSettings({ AQVEN_LOG_FORMAT: ' ', AQVEN_LOG_LEVEL: '' })).toEqual({ format: 'json', level: 'info' });
    // unset, the format follows where the lines go: a terminal reads them, anything else parses them
    expect(logSettings({}, { terminal: true })).toEqual({ format: 'pretty', level: 'info' });
    expect(logSettings({ AQVEN_LOG_FORMAT: 'json' }, { terminal: true }).format).toBe('json');
  });

  it('scrubs every secret of the environment from every line, censors secret fields, and makes free text safe', () => {
    const KEY = 'sk-or-v1-0123456789abcdef';
    const PASSWORD = 'pg-pass-5f1c"quoted';
    const HOOK = 'https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXX';
    const env = {
      OPENROUTER_API_KEY: KEY,
      AQVEN_DATABASE_URL: `postgres://aqven:${encodeURIComponent(PASSWORD)}@db.internal/aqven`,
      ONCALL_WEBHOOK_URL: HOOK,
      SHORT_TOKEN: 'abc',
      HOME: '/home/anna',
    };
    expect(envSecrets(env)).toEqual(expect.arrayContaining([KEY, PASSWORD, encodeURIComponent(PASSWORD), HOOK]));
    expect(envSecrets(env)).not.toContain('/home/anna');
    expect(envSecrets(env)).not.toContain('abc'); // too short to tell from a word
    const c = capture(env, { secrets: ['held-under-another-name-1234'] });
    c.log.warn(
      { detail: `quoted ${KEY} and ${PASSWORD}`, db: env.AQVEN_DATABASE_URL, apiKey: 'anything', headers: { authorization: 'Bearer x', accept: '*/*' }, nested: { password: 'p' } },
      `key ${KEY}`,
    );
    c.log.info(`another held-under-another-name-1234`);
    const all = c.lines.join('');
    for (const secret of [KEY, PASSWORD, encodeURIComponent(PASSWORD), JSON.stringify(PASSWORD).slice(1, -1), 'held-under-another-name-1234', 'Bearer x'])
      expect(all).not.toContain(secret);
    const [line] = c.json();
    expect(line).toMatchObject({
      msg: `key ${LOG_SECRET_MARK}`,
      apiKey: LOG_SECRET_MARK,
      headers: { authorization: LOG_SECRET_MARK, accept: '*/*' },
      nested: { password: LOG_SECRET_MARK },
    });

    // free text: the five detectors, URL credentials, a cut that leaves no part of a key
    expect(c.safe('write to anna@example.com from 10.1.2.3 via https://bob:hunter2@proxy.example/x')).toBe('write to <EMAIL> from <IP> via https://<credentials>@proxy.example/x');
    const long = c.safe(`${'x'.repeat(LOG_TEXT_MAX_CHARS - 5)}${KEY}`);
    expect(long.length).toBeLessThanOrEqual(LOG_TEXT_MAX_CHARS + 12);
    expect(long).not.toContain(KEY.slice(0, 5));
    // pretty lines go to a terminal: nothing in them may drive it
    const pretty = capture({ AQVEN_LOG_FORMAT: 'pretty' });
    expect(pretty.safe('refused\x1b[31m red\nnext')).toBe('refused\\u{001B}[31m red\\u{000A}next');
  });
});
