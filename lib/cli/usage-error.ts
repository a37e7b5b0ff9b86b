// Bad usage or configuration: the one line a command says before it exits 2 (DESIGN: CLI). Apart
// from exit.ts so that main.ts can name it without loading the database modules exit.ts needs.

/** bad usage or configuration: exit 2 with its one line */
export class UsageError extends Error {}
