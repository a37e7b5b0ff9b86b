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

/** An io that keeps what a command wrote and the status it exited with (for tests). */
export function captureIo(): CliIo & { stdout: string; stderr: string; code: number | null } {
  const io = {
    stdout: '',
    stderr: '',
    code: null as number | null,
    out: (t: string) => void (io.stdout += t),
    err: (t: string) => void (io.stderr += t),
    exit: (c: number) => void (io.code = c),
  };
  return io;
}
