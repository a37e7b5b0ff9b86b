// The logs of a long-lived command (DESIGN: Observability, "Logs"), started in one call by
// `aqven serve` and `aqven worker` alike: the process's logger, and the run lines of every run the
// process runs — whatever door started it — through the run observers' seam.
import { addRunObserver } from '@/lib/flow/run-observers';
import { createLogger, type LoggerOptions, type ProcessLogger } from './logger';
import { runLogObserver } from './run-log';

export interface ProcessLogs extends ProcessLogger {
  /** no more run lines (the observer removed); the logger itself goes on writing */
  stop(): void;
}

/** The logger of the command, its run lines on; throws LogSettingError for a bad AQVEN_LOG_FORMAT or AQVEN_LOG_LEVEL. */
export function startLogs(o: LoggerOptions): ProcessLogs {
  const p = createLogger(o);
  const stop = addRunObserver(runLogObserver(p));
  return { ...p, stop };
}
