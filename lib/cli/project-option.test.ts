// Every command that reads a project says --project's default the same way, the order
// resolveProjectDir follows (lib/cli/project-dir.ts: --project, then $AQVEN_PROJECT, then ./showcase).
import { describe, expect, it } from 'vitest';
import { captureIo } from './io';
import { runCli } from './program';
import { PROJECT_DEFAULT } from './project-dir';

const COMMANDS = [
  ['check'],
  ['run'],
  ['runs'],
  ['show'],
  ['search'],
  ['replay'],
  ['limits'],
  ['runs', 'purge'],
  ['runs', 'reconcile'],
  ['db', 'migrate'],
  ['db', 'status'],
  ['user', 'add'],
  ['user', 'list'],
  ['token', 'list'],
  ['audit'],
  ['alerts', 'test'],
  ['worker'],
  ['serve'],
];

describe('--project in every command’s help', () => {
  it.each(COMMANDS.map((c) => [c.join(' '), c]))('aqven %s names the default', async (_name, command) => {
    const io = captureIo();
    expect(await runCli([...command, '--help'], io)).toBe(0);
    const help = io.stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--project <dir> /);
    expect(help).toContain(PROJECT_DEFAULT);
  });
});
