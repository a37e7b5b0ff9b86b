// The agent policy form in PostgreSQL mode (DESIGN: Storage, "The project in the database"): a
// save is a new project snapshot — the newest one with the agent file changed — and a policy
// revision naming it; a file changed in the project since the form was opened is a conflict, and
// a push of another file in between is kept. The project folder on disk is never written.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '@/db/audit-queries';
import { listPolicyRevisions } from '@/db/policy-queries';
import { latestSnapshot, listSnapshots, pushSnapshot } from '@/db/snapshot-queries';
import { checkProjectFiles } from '@/lib/project';
import { openTestDb, type TestDb } from '../helpers/dialects';
import { copyShowcase } from '../helpers/showcase';
import { saveEnv } from '../helpers/saved-env';

const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL']);
let t: TestDb;
let dir: string;
let writerOnDisk: string;

beforeAll(async () => {
  t = await openTestDb('pg');
  dir = copyShowcase();
  writerOnDisk = await readFile(join(dir, 'agents/writer.yaml'), 'utf8');
  process.env.AQVEN_PROJECT = dir;
  process.env.AQVEN_SIMULATE = '1';
  process.env.AQVEN_DATABASE_URL = t.target;
}, 90_000);

afterAll(async () => {
  const { serverSession } = await import('@/lib/server/session');
  await (await serverSession()).close();
  await t?.close();
  restoreEnv();
});

const session = async () => (await import('@/lib/server/session')).serverSession();
const save = async (agent: string, retries: number, base: string) => {
  const fd = new FormData();
  fd.set('agent', agent);
  fd.set('model', 'openrouter:openai/gpt-oss-20b');
  fd.set('retries', String(retries));
  for (const k of ['on_error', 'on_refusal', 'on_truncated']) fd.set(k, k === 'on_error' ? 'retry' : 'fail');
  fd.set('base', base);
  const { saveAgentPolicy } = await import('@/lib/actions/save-agent-policy');
  return saveAgentPolicy({ ok: false }, fd);
};
/** the hash the form carries: of the agent file as the page read it */
const formBase = async (agent: string) => {
  const { readAgentFile } = await import('@/lib/server/agent-file');
  return (await readAgentFile((await session()).project, agent))!.hash;
};
const newestFiles = async () => checkProjectFiles((await latestSnapshot(t.db))!.files, 'newest');

describe('the policy form in PostgreSQL mode', () => {
  it('a save makes a snapshot with the changed agent file and a revision naming it', async () => {
    const s = await session();
    const first = s.snapshotId!;
    expect(first).toBe((await latestSnapshot(t.db))!.id); // the folder was pushed on first use
    const state = await save('writer', 3, await formBase('writer'));
    expect(state).toMatchObject({ ok: true, revision: 1 });
    expect(state.errors).toBeUndefined();

    const [snap] = await listSnapshots(t.db, 1);
    expect(snap).toMatchObject({ author: 'dashboard', note: 'policy writer' });
    expect(snap!.id).toBeGreaterThan(first);
    const files = await newestFiles();
    expect(files['agents/writer.yaml']).toContain('retries: 3');
    expect(files['agents/writer.yaml']).toContain('description: "Writes replies to customers'); // the rest of the file kept
    const [rev] = await listPolicyRevisions(t.db, 'writer');
    expect(rev).toMatchObject({ revision: 1, author: 'dashboard', snapshotId: snap!.id, yaml: files['agents/writer.yaml'] });
    expect(rev!.diff).toContain('+  retries: 3');
    // the audit trail names the revision and the snapshot it made; nobody was signed in (the dashboard is open)
    expect((await listAudit(t.db, { kind: 'policy.saved' })).rows.map((r) => [r.actor, r.target, r.detail])).toEqual([[null, 'writer', { revision: 1, snapshot: snap!.id }]]);

    // the session runs the new snapshot; the folder on disk is not the project any more
    expect(s.snapshotId).toBe(snap!.id);
    expect(s.project.agents.writer!.output.retries).toBe(3);
    expect(await readFile(join(dir, 'agents/writer.yaml'), 'utf8')).toBe(writerOnDisk);
  });

  it('refuses the save when the agent file changed in the project since the form was opened', async () => {
    const base = await formBase('writer');
    const files = await newestFiles();
    await pushSnapshot(t.db, {
      files: { ...files, 'agents/writer.yaml': files['agents/writer.yaml']!.replace('temperature: 0.7', 'temperature: 0.2') },
      author: 'cli:someone',
      note: 'push',
    });
    const latestBefore = (await latestSnapshot(t.db))!.id;
    const state = await save('writer', 5, base);
    expect(state).toEqual({
      ok: false,
      errors: {
        form: [
          {
            code: 'E_CONFLICT',
            message: `agents/writer.yaml was changed in the project (snapshot ${latestBefore}) after this form was opened; reload the page to edit the file as it is now`,
          },
        ],
      },
    });
    expect((await latestSnapshot(t.db))!.id).toBe(latestBefore);
    expect(await listPolicyRevisions(t.db, 'writer')).toHaveLength(1);
  });

  it('keeps a push of another file made after the form was opened', async () => {
    const base = await formBase('classifier'); // the session may still run an older snapshot
    const files = await newestFiles();
    await pushSnapshot(t.db, { files: { ...files, 'flows/triage.yaml': `${files['flows/triage.yaml']}# pushed meanwhile\n` }, author: 'cli:someone', note: 'push' });
    const state = await save('classifier', 2, base);
    expect(state).toMatchObject({ ok: true, revision: 1 });
    const after = await newestFiles();
    expect(after['flows/triage.yaml']).toContain('# pushed meanwhile');
    expect(after['agents/writer.yaml']).toContain('temperature: 0.2');
    expect(after['agents/classifier.yaml']).toContain('retries: 2');
    const [rev] = await listPolicyRevisions(t.db, 'classifier');
    expect(rev!.snapshotId).toBe((await latestSnapshot(t.db))!.id);
    expect((await session()).snapshotId).toBe(rev!.snapshotId);
  });

  it('a save that changes nothing makes no snapshot', async () => {
    const count = (await listSnapshots(t.db, 100)).length;
    const state = await save('classifier', 2, await formBase('classifier'));
    expect(state).toMatchObject({ ok: true, unchanged: true });
    expect(await listSnapshots(t.db, 100)).toHaveLength(count);
  });

  it('edits of the folder on disk are not what the form edits', async () => {
    await writeFile(join(dir, 'agents/writer.yaml'), 'not even YAML: [');
    const state = await save('writer', 4, await formBase('writer'));
    expect(state).toMatchObject({ ok: true });
    expect((await newestFiles())['agents/writer.yaml']).toContain('retries: 4');
  });
});
