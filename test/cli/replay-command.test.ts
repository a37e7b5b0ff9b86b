// `aqven replay` as a user runs it, over the showcase's database (the command line run in this
// process: aqvenHere). The run to replay is named by its id, its short id or a unique prefix (an
// ambiguous one lists the runs, exit 2); the replay's record says it is one, in `aqven replay --json`,
// `aqven show` and `aqven runs` alike; a missing API key is said before anything else, as `aqven run`
// says it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shortRunId } from '@/lib/shared/short-id';
import { copyShowcase } from '../helpers/showcase';
import { insertTwinRuns } from '../helpers/twin-runs';
import { aqvenHere as aqven } from './aqven-process';

const NO_KEY = { OPENROUTER_API_KEY: undefined };

describe('aqven replay RUN NODE', () => {
  it('takes the short id or a prefix of the run, and its record, shown or listed, says it is a replay of that run', async () => {
    const dir = copyShowcase();
    const original = JSON.parse((await aqven(['run', 'triage', '--simulate', '--json', '--project', dir, '--input', '{"ticket":"replay me by my short id"}'], NO_KEY)).out) as {
      id: string;
    };
    const short = shortRunId(original.id);

    const byShort = await aqven(['replay', short, 'classify', '--simulate', '--json', '--project', dir], NO_KEY);
    expect(byShort.err).not.toMatch(/E_RUN/);
    expect([0, 1]).toContain(byShort.code);
    const replay = JSON.parse(byShort.out) as { id: string; kind: string; replayOf: string; replayNode: string };
    expect(replay).toMatchObject({ kind: 'replay', replayOf: original.id, replayNode: 'classify' });
    expect(byShort.err).toContain(`replay of node classify of run ${original.id}`);

    // the stored record is the printed one: kind and link included
    const shown = await aqven(['show', replay.id, '--json', '--project', dir]);
    expect(JSON.parse(shown.out)).toEqual(replay);
    expect((await aqven(['show', original.id, '--json', '--project', dir])).out).toContain('"kind": "flow"');
    const text = (await aqven(['show', replay.id, '--project', dir])).out.split('\n');
    expect(text[1]).toBe(`replay of ${short} · node classify`);
    const listed = (await aqven(['runs', '--project', dir])).out.split('\n');
    expect(listed.find((l) => l.includes(replay.id))).toMatch(new RegExp(`  replay of ${short} · node classify$`));
    expect(listed.find((l) => l.includes(original.id))).not.toMatch(/replay of/);

    // a prefix of the whole id (the timestamp part of a v7 id names this run only)
    const byPrefix = await aqven(['replay', original.id.slice(0, 13), 'classify', '--simulate', '--json', '--project', dir], NO_KEY);
    expect(JSON.parse(byPrefix.out)).toMatchObject({ kind: 'replay', replayOf: original.id });
  }, 120_000);

  it('lists the runs an ambiguous prefix names and exits 2; no such run exits 2; a missing key is warned of first', async () => {
    const dir = copyShowcase();
    const file = join(dir, '.aqven', 'aqven.db');
    await aqven(['runs', '--project', dir]); // the database made and migrated
    const twins = await insertTwinRuns(file);

    const ambiguous = await aqven(['replay', 'beefcafe', 'classify', '--simulate', '--project', dir], NO_KEY);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.out).toBe('');
    expect(ambiguous.err.split('\n')).toEqual([
      `aqven replay: "beefcafe" names 2 runs (by the start of their id or of their short id); give more of it:`,
      `  ${twins[1]}  long-answer    failed      2026-01-01T10:00:00.000Z`,
      `  ${twins[0]}  triage         succeeded   2026-01-01T09:00:00.000Z`,
      '',
    ]);
    // its short id picks one: past the lookup, refused for what the run lacks, not for its id
    expect((await aqven(['replay', '2222bbbb', 'classify', '--simulate', '--project', dir], NO_KEY)).err).toContain(`aqven replay: E_NODE run ${twins[1]} has no node "classify"`);

    const none = await aqven(['replay', 'deadbeef', 'classify', '--project', dir], NO_KEY);
    expect(none.code).toBe(2);
    const lines = none.err.trim().split('\n');
    expect(lines[0]).toMatch(/W_API_KEY/);
    expect(lines.at(-1)).toBe('aqven replay: E_RUN no run deadbeef is stored');
  }, 120_000);
});
