// `aqven explain CODE` (DESIGN: CLI): the reference page of a code — one `aqven check` reports (what
// it means, a file that triggers it, the fix) or one a failed run or node carries (what it means,
// the fix) — as `rustc --explain` prints an error's. The pages are the two tables docs/errors.md is
// generated from: lib/project/check-reference.ts and lib/shared/run-codes.ts.
// Exit statuses: 0 printed, 2 a code with no page (the codes that have one are listed).
import type { Command } from 'commander';
import { CHECK_REFERENCE, formatCheckReference } from '@/lib/project/check-reference';
import { RUN_CODE_REFERENCE, formatRunCodeReference } from '@/lib/shared/run-codes';
import { type CliIo, processIo } from './io';
import { EXIT_USAGE } from './exit';

/** The page of `code` (any case), or null. */
export function explainPage(code: string): string | null {
  const wanted = code.trim().toLowerCase();
  const check = CHECK_REFERENCE.find((r) => r.code.toLowerCase() === wanted);
  if (check) return formatCheckReference(check);
  const run = RUN_CODE_REFERENCE.find((r) => r.code.toLowerCase() === wanted);
  return run ? formatRunCodeReference(run) : null;
}

export function runExplain(code: string, io: CliIo = processIo): number {
  const page = explainPage(code);
  if (page === null) {
    const codes = [...CHECK_REFERENCE, ...RUN_CODE_REFERENCE].map((r) => r.code).join(', ');
    io.err(`aqven explain: no page for "${code}"; codes with a page: ${codes}\n`);
    return EXIT_USAGE;
  }
  io.out(page);
  return 0;
}

export function registerExplain(program: Command, io: CliIo = processIo): Command {
  return program
    .command('explain')
    .description('print the reference page of a code aqven check reports (E_FIELD, W_API_KEY, …) or a failed run or node carries (refusal, E_BUDGET, …)')
    .argument('<code>', 'the code, e.g. E_OUTCOME_FALLBACK or invalid_output')
    .action((code: string) => {
      io.exit(runExplain(code, io));
    });
}
