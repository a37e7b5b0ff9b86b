// A command's logs started in one call (lib/observe/logs.ts): in JSON mode the process's console
// becomes log lines, made safe, and stop() gives the console back; a terminal's console is left alone.
import { afterEach, describe, expect, it } from 'vitest';
import { startLogs, type ProcessLogs } from './logs';

let logs: ProcessLogs | null = null;
afterEach(() => {
  logs?.stop();
  logs = null;
});

describe('startLogs', () => {
  it("JSON: the console's lines are log lines at their level, made safe; stop() restores the console", () => {
    const before = { log: console.log, error: console.error };
    const lines: string[] = [];
    logs = startLogs({ name: 'aqven serve', env: { SOME_API_KEY: 'sk-console-key-0123456789' }, write: (l) => lines.push(l), console: true });
    console.log('✓ Running next.config.ts took %d ms', 832);
    console.error('aqven: a commit of run facts failed for anna@example.com with sk-console-key-0123456789');
    console.debug('below info');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toEqual([
      expect.objectContaining({ level: 'info', source: 'console', msg: '✓ Running next.config.ts took 832 ms' }),
      expect.objectContaining({ level: 'error', source: 'console', msg: 'aqven: a commit of run facts failed for <EMAIL> with <REDACTED>' }),
    ]);
    logs.stop();
    logs = null;
    expect(console.log).toBe(before.log);
    expect(console.error).toBe(before.error);
  });

  it("pretty (a terminal's), or without console: the console is left alone", () => {
    const error = console.error;
    logs = startLogs({ name: 'aqven worker', env: { AQVEN_LOG_FORMAT: 'pretty' }, write: () => {}, console: true });
    expect(console.error).toBe(error);
    logs.stop();
    logs = startLogs({ name: 'aqven worker', env: {}, write: () => {} });
    expect(console.error).toBe(error);
  });
});
