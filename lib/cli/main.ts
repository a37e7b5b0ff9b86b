import { Command } from 'commander';
import { registerCheck } from './check';
import { registerInit } from './init';
import { registerRun } from './run';
import { registerSim } from './sim';

const program = new Command('aqven')
  .description('Run LLM flows where every call ends ok, error, refusal or truncated — and see what happened')
  .showHelpAfterError()
  // commander's own usage errors (unknown option, missing argument) exit 2, like ours
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

registerCheck(program);
registerRun(program);
registerSim(program);
registerInit(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`aqven: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(70);
});
