// The `aqven` command (DESIGN: CLI), built into dist/cli by scripts/build-cli.mjs and started by
// bin/aqven.mjs: the command line of lib/cli/program.ts, run for this process.
import { processIo } from './io';
import { failureOf, runCli } from './program';

/**
 * A reader that went away (`aqven check | head -1`) ends the command quietly, as SIGPIPE ends other
 * tools: nothing on stderr, the exit status the command has set by then (0 if none). The exit waits
 * for the code already running, so a command that wrote its last line still sets its status.
 */
function endQuietlyOnClosedOutput(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    setImmediate(() => process.exit(process.exitCode ?? 0));
  });
}
endQuietlyOnClosedOutput(process.stdout);
endQuietlyOnClosedOutput(process.stderr);

// a line that ended early (help, --version, bad usage, a failure) exits at once, whatever is still open
runCli(process.argv.slice(2), processIo).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err: unknown) => {
    const { code, line } = failureOf(err);
    console.error(line);
    process.exit(code);
  },
);
