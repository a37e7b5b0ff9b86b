// Two dashboard server processes over one project never run a stale policy (DESIGN: Storage, "The
// project folder in a long-lived process", "The project in the database"), on both dialects: this
// process's server session (startRun, reloadProject) and a real second process
// (test/fixtures/dashboard-child.ts, its own session and database connection) each run, at the
// start of every run, what the other saved last — and record its hash.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/db/client';
import { getRunFacts } from '@/db/queries';
import { latestSnapshot } from '@/db/snapshot-queries';
import type { Db } from '@/db/types';
import type { Session } from '@/lib/flow/session';
import { updateAgentYaml } from '@/lib/project';
import { DIALECTS, openTestDb, type TestDb } from '../helpers/dialects';
import { folderHash, quietShowcase } from '../helpers/quiet-showcase';
import { saveEnv } from '../helpers/saved-env';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
afterAll(() => restoreEnv());

/** The other dashboard: a child process answering one JSON line per command. */
function otherDashboard(dir: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--conditions=react-server', '--import', 'tsx', 'test/fixtures/dashboard-child.ts', dir], {
    env,
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`the other dashboard exited: ${stderr}`);
    return JSON.parse(value as string) as Record<string, unknown>;
  };
  return {
    ready: next(),
    ask: (command: string) => {
      child.stdin.write(`${command}\n`);
      return next();
    },
    close: async () => {
      child.stdin.end('exit\n');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

const server = () => import('@/lib/server/session');

/** The server session is one per process (a global): the next block opens its own. */
async function dropServerSession(): Promise<void> {
  const g = globalThis as { __aqvenSession?: Promise<Session>; __aqvenBackground?: () => void };
  const s = await g.__aqvenSession?.catch(() => undefined);
  await s?.close();
  g.__aqvenBackground?.();
  delete g.__aqvenSession;
  if (s) await closeDb(s.target);
}

/** The writer's retries as run `runId` recorded them (each node run keeps its agent's policy), once it ended. */
async function writerRetriesOf(db: Db, runId: string): Promise<number | undefined> {
  const end = Date.now() + 30_000; // a hang guard, not a timed assertion
  for (;;) {
    const f = await getRunFacts(db, runId);
    if (f && f.status !== 'running') return f.nodes.find((n) => n.agent === 'writer')?.policy?.retries;
    if (Date.now() > end) throw new Error(`timed out waiting for run ${runId} to end`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(DIALECTS)('two dashboard processes on %s', (dialect) => {
  let t: TestDb | null = null;
  let dir: string;
  let other: ReturnType<typeof otherDashboard>;
  beforeAll(async () => {
    dir = await quietShowcase();
    process.env.AQVEN_PROJECT = dir;
    process.env.AQVEN_SIMULATE = '1';
    if (dialect === 'pg') {
      t = await openTestDb('pg');
      process.env.AQVEN_DATABASE_URL = t.target;
    } else delete process.env.AQVEN_DATABASE_URL;
    await (await server()).serverSession(); // this dashboard first (in PostgreSQL mode: it pushes the folder)
    other = otherDashboard(dir, { ...process.env });
    await other.ready;
  }, 90_000);
  afterAll(async () => {
    await other?.close();
    await dropServerSession();
    await t?.close();
  });

  it('a run started here runs what the other process saved, and records its hash and who started it', async () => {
    const saved = await other.ask('save writer 3');
    expect(saved).toMatchObject({ saved: true });
    const { startRun, serverSession } = await server();
    const res = await startRun('triage', { ticket: 'I was charged twice' }, 'ana');
    if (!res.ok) throw new Error(res.error);
    const s = await serverSession();
    const { runs } = s.db.t;
    const [row] = await s.db.q.select().from(runs).where(eq(runs.id, res.id));
    expect(row).toMatchObject({ startedBy: 'ana', projectHash: saved.projectHash, snapshotId: saved.snapshotId });
    expect(s.project.agents.writer!.output.retries).toBe(3);
    if (dialect === 'sqlite') {
      expect(saved.projectHash).toBe(await folderHash(dir));
      expect(await writerRetriesOf(s.db, res.id)).toBe(3);
    } else {
      expect(row!.status).toBe('queued'); // for the workers, which run the snapshot it names
      expect(saved.projectHash).toBe((await latestSnapshot(s.db))!.hash);
    }
  });

  it('and the other process runs what this one saved', async () => {
    const { serverSession } = await server();
    const { readAgentFile, saveAgentFile } = await import('@/lib/server/agent-file');
    const { reloadProject } = await import('@/lib/server/project-reload');
    const s = await serverSession();
    const file = (await readAgentFile(s.project, 'writer'))!;
    expect(await saveAgentFile(s, file, updateAgentYaml(file.text, { output: { retries: 2 } }), { author: 'dashboard', note: 'policy writer' })).toMatchObject({ ok: true });
    expect(await reloadProject()).toEqual({ ok: true });
    const ran = await other.ask('run triage');
    expect(ran).toMatchObject({ status: 'succeeded', writerRetries: 2, projectHash: s.projectHash, snapshotId: s.snapshotId });
    const { runs } = s.db.t;
    const [row] = await s.db.q
      .select()
      .from(runs)
      .where(eq(runs.id, ran.runId as string));
    expect(row).toMatchObject({ startedBy: 'child', projectHash: s.projectHash });
    expect(await writerRetriesOf(s.db, ran.runId as string)).toBe(2);
  });

  // folder mode only: on PostgreSQL the project is the newest snapshot, which `aqven project push` checks first
  (dialect === 'sqlite' ? it : undefined)?.(
    'a folder edited by hand so that it fails check starts no run: 400 naming the file, nothing stored; fixed, runs start again',
    async () => {
      const { startRun, serverSession } = await server();
      const { reloadProject } = await import('@/lib/server/project-reload');
      const s = await serverSession();
      const count = async () => (await s.db.q.select({ id: s.db.t.runs.id }).from(s.db.t.runs)).length;
      const before = await count();
      const path = join(dir, 'agents/writer.yaml');
      const good = await readFile(path, 'utf8');
      await writeFile(path, 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "nope"\n');
      const refused = await startRun('triage', { ticket: 'Hello' });
      expect(refused).toMatchObject({ ok: false, status: 400 });
      expect(!refused.ok && refused.error).toMatch(/^the project folder .* changed and now fails aqven check: agents\/writer\.yaml:3:8: E_MODEL /);
      expect(await count()).toBe(before);
      const reload = await reloadProject();
      expect(reload.ok).toBe(false);
      expect(!reload.ok && reload.diagnostics[0]).toMatchObject({ file: 'agents/writer.yaml', line: 3, col: 8, code: 'E_MODEL' });

      await writeFile(path, good);
      const res = await startRun('triage', { ticket: 'Hello' }); // nobody named: the dashboard is open
      if (!res.ok) throw new Error(res.error);
      const [row] = await s.db.q.select().from(s.db.t.runs).where(eq(s.db.t.runs.id, res.id));
      expect(row).toMatchObject({ startedBy: null, projectHash: await folderHash(dir) });
      await writerRetriesOf(s.db, res.id);
    },
  );
});
