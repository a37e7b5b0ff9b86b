// Where a command writes and how it exits; tests pass their own to read what a user would see.
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** sets the exit status; the process ends when the command is done */
  exit(code: number): void;
}

/** A text as the process writes it: ending in a newline. */
const asLine = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(asLine(text)),
  err: (text) => void process.stderr.write(asLine(text)),
  exit: (code) => {
    process.exitCode = code;
  },
};

/**
 * An io that keeps what a command wrote and the status it exited with (for tests); `{ asProcess: true }`
 * keeps the text as processIo writes it (each write ending in a newline).
 */
export function captureIo(o: { asProcess?: boolean } = {}): CliIo & { stdout: string; stderr: string; code: number | null } {
  const text = o.asProcess ? asLine : (t: string) => t;
  const io = {
    stdout: '',
    stderr: '',
    code: null as number | null,
    out: (t: string) => void (io.stdout += text(t)),
    err: (t: string) => void (io.stderr += text(t)),
    exit: (c: number) => void (io.code = c),
  };
  return io;
}
