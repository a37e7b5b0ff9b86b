// A long-lived process over a project folder (DESIGN: Storage, "The project folder in a long-lived
// process"): refreshSession looks at the files' stats, reads and hashes them only when those
// changed, and loads the project only when the hash did; two sessions over one folder (two
// dashboard processes) each run the files as they are when a run starts, and every run records
// the hash of the files it started under. A folder that now fails check is refused by file.
import { readFile, rename, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/db/client';
import { getRunFacts } from '@/db/queries';
import { beginRun } from '@/lib/flow/run-flow';
import { folderStats, openSession, ProjectInvalidError, refreshSession, type Session } from '@/lib/flow/session';
import { backdate, folderHash, quietShowcase, setRetries } from '../helpers/quiet-showcase';

const TICKET = { ticket: 'I was charged twice' };
const BROKEN_WRITER = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "nope"\n';

/** A run of `triage` through session `s`, as the dashboard starts one: refreshed first, recorded with the session's hash. */
async function startTriage(s: Session) {
  await refreshSession(s);
  return beginRun({
    project: s.project,
    flow: 'triage',
    input: TICKET,
    providers: s.providers,
    env: s.env,
    db: s.db,
    snapshotId: s.snapshotId,
    projectHash: s.projectHash,
    startedBy: 'test',
  });
}

/** The writer's retries as the run recorded them (each node run keeps its agent's policy as it ran). */
async function writerRetries(s: Session, runId: string): Promise<number | undefined> {
  const facts = await getRunFacts(s.db, runId);
  return facts?.nodes.find((n) => n.agent === 'writer')?.policy?.retries;
}

describe('a session over a project folder', () => {
  let dir: string;
  let a: Session;
  let b: Session;
  beforeAll(async () => {
    dir = await quietShowcase();
    // two dashboards' sessions over the one folder and its database file
    a = await openSession(dir, { env: {}, simulate: true });
    b = await openSession(dir, { env: {}, simulate: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    if (a) await closeDb(a.target);
  });

  it('runs the hash of its files, and only looks at an unchanged folder: no file read, none parsed', async () => {
    expect(a.projectHash).toBe(await folderHash(dir));
    expect(a.projectHash).toMatch(/^[0-9a-f]{64}$/);
    for (let i = 0; i < 3; i++) expect(await refreshSession(a)).toBe(false);
    expect(folderStats(a)).toEqual({ checks: 3, reads: 0, loads: 0 });
  });

  it('reads a file whose stats changed but not its text, once, and parses nothing', async () => {
    const before = folderStats(a)!;
    const when = Date.now() / 1000 - 7200;
    await utimes(join(dir, 'agents/writer.yaml'), when, when);
    expect(await refreshSession(a)).toBe(false);
    expect(await refreshSession(a)).toBe(false);
    expect(folderStats(a)).toEqual({ checks: before.checks + 2, reads: before.reads + 1, loads: 0 });
  });

  it('runs what the other session saved, and a run started before the save keeps its own files and hash', async () => {
    const h1 = a.projectHash;
    const first = await startTriage(b); // started before the save; still going or done, it keeps its project
    expect(b.project.agents.writer!.output.retries).toBe(1);

    await setRetries(dir, 'writer', 3); // session A's save: the file replaced in one step
    const h2 = await folderHash(dir);
    expect(h2).not.toBe(h1);
    const second = await startTriage(b);
    expect(b.projectHash).toBe(h2);
    expect(b.project.agents.writer!.output.retries).toBe(3);
    expect(folderStats(b)!.loads).toBe(1);

    await Promise.all([first.done, second.done]);
    const { runs } = b.db.t;
    const rows = await b.db.q.select({ id: runs.id, projectHash: runs.projectHash, startedBy: runs.startedBy }).from(runs);
    expect(rows).toEqual(
      expect.arrayContaining([
        { id: first.runId, projectHash: h1, startedBy: 'test' },
        { id: second.runId, projectHash: h2, startedBy: 'test' },
      ]),
    );
    expect(await writerRetries(b, first.runId)).toBe(1);
    expect(await writerRetries(b, second.runId)).toBe(3);

    // session A was not told either: its next run picks the file up the same way
    expect(a.project.agents.writer!.output.retries).toBe(1);
    const third = await startTriage(a);
    await third.done;
    expect(a.projectHash).toBe(h2);
    expect(await writerRetries(a, third.runId)).toBe(3);
  });

  it('picks up a hand edit written in place (same file, same size) right after the last look', async () => {
    const path = join(dir, 'agents/writer.yaml');
    await setRetries(dir, 'writer', 4);
    expect(await refreshSession(a)).toBe(true);
    await writeFile(path, (await readFile(path, 'utf8')).replace('retries: 4', 'retries: 5'));
    expect(await refreshSession(a)).toBe(true);
    expect(a.project.agents.writer!.output.retries).toBe(5);
    expect(a.projectHash).toBe(await folderHash(dir));
  });

  it('refuses a folder that now fails check, naming the file, keeps its project, and does not parse it again while it stays so', async () => {
    await backdate(dir);
    await refreshSession(a);
    const kept = { hash: a.projectHash, project: a.project };
    const path = join(dir, 'agents/writer.yaml');
    const good = await readFile(path, 'utf8');
    await writeFile(path, BROKEN_WRITER);
    await backdate(dir);
    const loads = folderStats(a)!.loads;
    const err = (await refreshSession(a).catch((e: unknown) => e)) as ProjectInvalidError;
    expect(err).toBeInstanceOf(ProjectInvalidError);
    expect(err.message).toMatch(new RegExp(`^the project folder ${dir} changed and now fails aqven check: agents/writer\\.yaml:3:8: E_MODEL `));
    expect(err.message).toContain('no run was started under the files as they were');
    expect(err.diagnostics.some((d) => d.file === 'agents/writer.yaml' && d.severity === 'error')).toBe(true);
    expect(a.projectHash).toBe(kept.hash);
    expect(a.project).toBe(kept.project);
    await expect(refreshSession(a)).rejects.toBe(err); // the same folder: the same answer, not parsed again
    expect(folderStats(a)!.loads).toBe(loads + 1);

    // put back as it was: read and hashed, found to be the files the session runs, not parsed
    await writeFile(path, good);
    await backdate(dir);
    expect(await refreshSession(a)).toBe(false);
    expect(folderStats(a)!.loads).toBe(loads + 1);
    expect(a.projectHash).toBe(kept.hash);
  });

  it('sees a file added or removed', async () => {
    const extra = join(dir, 'agents/extra.yaml');
    await writeFile(extra, 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\n');
    await backdate(dir);
    expect(await refreshSession(a)).toBe(true);
    expect(Object.keys(a.project.agents)).toContain('extra');
    await rename(extra, join(dir, 'extra.yaml.bak')); // out of agents/: no longer a project file
    expect(await refreshSession(a)).toBe(true);
    expect(Object.keys(a.project.agents)).not.toContain('extra');
    expect(a.projectHash).toBe(await folderHash(dir));
  });

  it('runs concurrent refreshes one after the other, so a later look is never overwritten by an earlier one', async () => {
    await setRetries(dir, 'writer', 2);
    const looks = [refreshSession(a), refreshSession(a), refreshSession(a)];
    await setRetries(dir, 'writer', 6); // while the first look may be reading
    looks.push(refreshSession(a));
    await Promise.all(looks);
    expect(a.project.agents.writer!.output.retries).toBe(6);
    expect(a.projectHash).toBe(await folderHash(dir));
  });
});
