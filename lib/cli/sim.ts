// `aqven sim [--port P] [--scenario FILE]`: the provider simulator as a standalone server
// (DESIGN: CLI; DESIGN: The provider simulator). Runs until SIGINT/SIGTERM.
import type { Command } from 'commander';
import { processIo, type CliIo } from './io';
import { loadScenario, startSimulator, type Dialect, type SimServer } from '../sim/index';

export const DEFAULT_SIM_PORT = 4010;
const DIALECTS: Dialect[] = ['openai', 'openrouter', 'anthropic', 'gemini'];

export interface SimCliOptions {
  port?: string | number;
  scenario?: string;
}

/** A usage/config problem: printed as is, exit status 2. */
export class SimCliError extends Error {}

function parsePort(raw: string | number | undefined): number {
  if (raw === undefined) return DEFAULT_SIM_PORT;
  const port = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SimCliError(`--port: expected 0..65535, got ${JSON.stringify(raw)}`);
  return port;
}

/** Starts the simulator for the CLI and prints where it listens; the caller owns shutdown. */
export async function startSimCli(opts: SimCliOptions, print: (line: string) => void = console.log): Promise<SimServer> {
  const port = parsePort(opts.port);
  let scenario = {};
  if (opts.scenario) {
    try {
      scenario = await loadScenario(opts.scenario);
    } catch (err) {
      throw new SimCliError(err instanceof Error ? err.message : String(err));
    }
  }
  let sim: SimServer;
  try {
    sim = await startSimulator({ port, ...scenario });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new SimCliError(`port ${port} is already in use; pick another with --port`);
    throw err;
  }
  print(`aqven sim: provider simulator listening on ${sim.url}${opts.scenario ? ` (scenario ${opts.scenario})` : ''}`);
  print('base_url per wire protocol:');
  for (const d of DIALECTS) print(`  ${d.padEnd(11)} ${sim.baseUrl(d)}`);
  print(`control: POST ${sim.url}/_sim/scripts | POST /_sim/chaos | GET /_sim/requests | POST /_sim/reset`);
  print('Ctrl+C to stop.');
  return sim;
}

export function registerSim(program: Command, io: CliIo = processIo): void {
  program
    .command('sim')
    .description('start the provider simulator (OpenAI, OpenRouter, Anthropic and Gemini wire protocols)')
    .option('--port <port>', `port to listen on, 0 = any free port (default ${DEFAULT_SIM_PORT})`)
    .option('--scenario <file>', 'YAML or JSON file with scripts, chaos and latency (see lib/sim/README.md)')
    .action(async (opts: SimCliOptions) => {
      let sim: SimServer;
      try {
        sim = await startSimCli(opts, (line) => io.out(line));
      } catch (err) {
        if (!(err instanceof SimCliError)) throw err;
        io.err(`aqven sim: ${err.message}`);
        io.exit(2);
        return;
      }
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void sim.close().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
