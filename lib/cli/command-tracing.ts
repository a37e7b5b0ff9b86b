// How a command that runs flows starts tracing (DESIGN: Observability, "Traces"): `aqven run`,
// `aqven serve` and `aqven worker` call this once, at start; it is startTracing (lib/observe) with
// the command's version and its stderr. Off unless the OpenTelemetry environment asks for traces.
import { version } from '../../package.json';
import { startTracing, type Tracing } from '@/lib/observe/tracing';

export type { Tracing };

/**
 * Tracing for this command's runs, or null when the environment asks for none; the caller shuts it
 * down at its end. `say`: where a line for the user goes (a bad variable, a collector not answering):
 * the command's stderr, or its log.
 */
export function commandTracing(say: (line: string) => void): Promise<Tracing | null> {
  return startTracing({ version, log: say });
}
