import { Command } from 'commander';

const program = new Command('aqven').description('Run LLM flows with four outcomes, retries and policies');

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(2);
});
