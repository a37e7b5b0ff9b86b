import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Command } from 'commander';
import { cliReference } from './cli-reference';
import { captureIo } from './io';
import { allCommands } from './program';

function commandsOf(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...commandsOf(c)]);
}
const fullName = (cmd: Command): string => (cmd.parent ? `${fullName(cmd.parent)} ${cmd.name()}` : cmd.name());

describe('the CLI reference (docs/cli-reference.md)', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('has a section for every command and subcommand, with each of its arguments and options', { timeout: 60_000 }, async () => {
    const page = await cliReference();
    const commands = commandsOf(await allCommands(captureIo()));
    expect(commands.map(fullName)).toEqual(expect.arrayContaining(['aqven run', 'aqven runs purge', 'aqven token create', 'aqven explain']));
    const sections = page.split(/^## /m);
    for (const cmd of commands) {
      const section = sections.find((s) => s.startsWith(`${fullName(cmd)}\n`));
      expect(section, fullName(cmd)).toBeDefined();
      for (const o of cmd.options) expect(section, `${fullName(cmd)} ${o.flags}`).toContain(`| \`${o.flags}\``);
      for (const a of cmd.registeredArguments) expect(section, `${fullName(cmd)} ${a.name()}`).toContain(a.description);
    }
    // a default commander fills in is in its column
    expect(sections.find((s) => s.startsWith('aqven runs\n'))).toMatch(/\| `--limit <n>` \| how many \(1-500\) \| `20` \|/);
  });

  it('reads no environment: the same page whatever is set, with the rule of a default from the environment, and no machine path', { timeout: 60_000 }, async () => {
    const plain = await cliReference();
    vi.stubEnv('AQVEN_PROJECT', '/somewhere/else');
    vi.stubEnv('PORT', '4567');
    vi.stubEnv('AQVEN_DATABASE_URL', 'postgres://u@h/db');
    expect(await cliReference()).toBe(plain);
    expect(plain).toContain('default $AQVEN_PROJECT, then ./showcase');
    expect(plain).not.toContain(process.cwd());
    expect(plain).not.toMatch(/\/(home|tmp|Users|work)\//);
  });
});
