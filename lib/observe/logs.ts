// The logs of a long-lived command (DESIGN: Observability, "Logs"), started in one call by
// `aqven serve` and `aqven worker` alike: the process's logger, the run lines of every run the
// process runs — whatever door started it — through the run observers' seam, and, in JSON mode,
// the process's console as log lines too.
import { format } from 'node:util';
import { addRunObserver } from '@/lib/flow/run-observers';
import { createLogger, type LoggerOptions, type ProcessLogger } from './logger';
import { runLogObserver } from './run-log';

export interface ProcessLogs extends ProcessLogger {
  /** no more run lines (the observer removed), the console as it was; the logger itself goes on writing */
  stop(): void;
}

const CONSOLE = { log: 'info', info: 'info', debug: 'debug', warn: 'warn', error: 'error' } as const;

/**
 * JSON lines: what any code of the process prints with the console — Next.js's words as it starts
 * (`✓ Running next.config.ts took …`), its request errors, the warnings lower layers print with
 * console.error (`aqven: a commit of run facts failed: …`) — becomes a log line (`source: console`),
 * its text made safe: every line of stdout parses, and nothing reaches a collector unscrubbed.
 * Returns the console's restoration. Pretty (a terminal) leaves the console alone.
 */
function consoleToLog(p: ProcessLogger): () => void {
  if (p.format !== 'json') return () => {};
  const saved = { log: console.log, info: console.info, debug: console.debug, warn: console.warn, error: console.error };
  for (const [method, level] of Object.entries(CONSOLE) as [keyof typeof CONSOLE, (typeof CONSOLE)[keyof typeof CONSOLE]][]) {
    console[method] = (...args: unknown[]) => p.log[level]({ source: 'console' }, p.safe(format(...args).trim()));
  }
  return () => Object.assign(console, saved);
}

/**
 * The logger of the command, its run lines on; `console`: the process's console becomes log lines
 * too (JSON mode; the commands, not a test sharing its console). Throws LogSettingError for a bad
 * AQVEN_LOG_FORMAT or AQVEN_LOG_LEVEL.
 */
export function startLogs(o: LoggerOptions & { console?: boolean }): ProcessLogs {
  const p = createLogger(o);
  const removeObserver = addRunObserver(runLogObserver(p));
  const restoreConsole = o.console ? consoleToLog(p) : () => {};
  return {
    ...p,
    stop: () => {
      removeObserver();
      restoreConsole();
    },
  };
}
