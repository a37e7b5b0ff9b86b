// Where a command writes and how it exits; tests pass their own to read what a user would see.
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** sets the exit status; the process ends when the command is done */
  exit(code: number): void;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  exit: (code) => {
    process.exitCode = code;
  },
};
