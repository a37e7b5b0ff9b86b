// `aqven show` by the run's short id and `aqven search`, as a user runs them: the command line run
// in this process (aqvenHere) over the showcase's database; the real process is aqven-command's.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shortRunId } from '@/lib/shared/short-id';
import { copyShowcase } from '../helpers/showcase';
import { insertTwinRuns } from '../helpers/twin-runs';
import { aqvenHere as aqven } from './aqven-process';

describe('aqven show SHORT_ID and aqven search', () => {
  it('prints the run its short id names, an older (v4) run by its new short id too; an ambiguous prefix lists the runs it names and exits 2', async () => {
    const dir = copyShowcase();
    const run = await aqven(['run', 'triage', '--simulate', '--json', '--project', dir, '--input', '{"ticket":"short ids please"}']);
    const record = JSON.parse(run.out);
    // a time-ordered id (UUID v7); the short id is the start of its random last group
    expect(record.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const short = shortRunId(record.id);
    expect(short).toBe(record.id.slice(24, 32));

    const byShort = await aqven(['show', short, '--project', dir]);
    expect(byShort.code).toBe(0);
    expect(byShort.out).toBe((await aqven(['show', record.id, '--project', dir])).out);
    expect(byShort.out).toMatch(new RegExp(`^run ${record.id} `));
    expect(JSON.parse((await aqven(['show', short.toUpperCase(), '--json', '--project', dir])).out)).toEqual(record);

    // two runs with random (v4) ids, as recorded before ids were time-ordered, sharing their first 8 characters
    const file = join(dir, '.aqven', 'aqven.db');
    const twins = await insertTwinRuns(file);

    const ambiguous = await aqven(['show', 'beefcafe', '--project', dir]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.out).toBe('');
    expect(ambiguous.err.split('\n')).toEqual([
      `aqven show: "beefcafe" names 2 runs (by the start of their id or of their short id); give more of it:`,
      `  ${twins[1]}  long-answer    failed      2026-01-01T10:00:00.000Z`,
      `  ${twins[0]}  triage         succeeded   2026-01-01T09:00:00.000Z`,
      '',
    ]);
    // the whole id picks one, and so does the short id the run is shown with now
    const whole = await aqven(['show', twins[1]!, '--json', '--project', dir]);
    expect([whole.code, JSON.parse(whole.out).flow]).toEqual([0, 'long-answer']);
    const byNewShort = await aqven(['show', '1111aaaa', '--json', '--project', dir]);
    expect([byNewShort.code, JSON.parse(byNewShort.out).id]).toEqual([0, twins[0]]);
    // too short to look up, and no such run: exit 1
    expect(await aqven(['show', short.slice(0, 3), '--project', dir])).toMatchObject({ code: 1, err: `aqven show: no run with id ${short.slice(0, 3)}\n` });
    expect(await aqven(['show', 'deadbeef', '--project', dir])).toMatchObject({ code: 1, err: 'aqven show: no run with id deadbeef\n' });

    // search: the words of the run's input, marked; a run id prefix; JSON; nothing found
    const found = await aqven(['search', 'SHORT', 'ids', '--project', dir]);
    expect(found.code).toBe(0);
    expect(found.out.split('\n').slice(0, 2)).toEqual([
      `${short}  triage         ${record.status.padEnd(11)} input                ${record.startedAt}`,
      '    {"ticket":"[short] [ids] please"}',
    ]);
    expect((await aqven(['search', 'beefcafe', '--project', dir])).out.split('\n')).toEqual([
      '2222bbbb  long-answer    failed      run id               2026-01-01T10:00:00.000Z',
      `    [beefcafe]${twins[1]!.slice(8)}`,
      '1111aaaa  triage         succeeded   run id               2026-01-01T09:00:00.000Z',
      `    [beefcafe]${twins[0]!.slice(8)}`,
      '',
    ]);
    // a short id is found in the id's last group, and marked there
    expect((await aqven(['search', short, '--project', dir])).out.split('\n').slice(0, 2)).toEqual([
      `${short}  triage         ${record.status.padEnd(11)} run id               ${record.startedAt}`,
      `    ${record.id.slice(0, 24)}[${short}]${record.id.slice(32)}`,
    ]);
    const json = JSON.parse((await aqven(['search', 'pleas*', '--json', '--project', dir])).out);
    expect(json.hits.map((h: { runId: string; field: string }) => [h.runId, h.field])).toEqual([[record.id, 'input']]);
    expect(await aqven(['search', 'walrus', '--project', dir])).toMatchObject({ code: 0, out: 'no run input, node output or failure text holds every one of these words\n' });
    expect((await aqven(['search', '--limit', '0', 'x', '--project', dir])).code).toBe(2);
  }, 60_000);
});
