// `aqven explain CODE` (DESIGN: CLI): the reference page of a code `aqven check` reports — what it
// means, a file that triggers it, the fix — as `rustc --explain` prints an error's. The pages are
// lib/project/check-reference.ts, the one table docs/errors.md is generated from.
// Exit statuses: 0 printed, 2 a code with no page (the codes that have one are listed).
import type { Command } from 'commander';
import { CHECK_REFERENCE, checkReference, formatCheckReference } from '@/lib/project/check-reference';
import { type CliIo, processIo } from './io';
import { EXIT_USAGE } from './exit';

export function runExplain(code: string, io: CliIo = processIo): number {
  const entry = checkReference(code.trim().toUpperCase());
  if (!entry) {
    io.err(`aqven explain: no page for "${code}"; codes with a page: ${CHECK_REFERENCE.map((r) => r.code).join(', ')}\n`);
    return EXIT_USAGE;
  }
  io.out(formatCheckReference(entry));
  return 0;
}

export function registerExplain(program: Command, io: CliIo = processIo): Command {
  return program
    .command('explain')
    .description('print the reference page of a code aqven check reports (E_FIELD, W_API_KEY, …)')
    .argument('<code>', 'the code, e.g. E_OUTCOME_FALLBACK')
    .action((code: string) => {
      io.exit(runExplain(code, io));
    });
}
