import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/dialects';
import { worldOn, type World } from '../helpers/showcase';
import type { Db } from '@/db/types';

describe.each(DIALECTS)('run loop on %s', (dialect) => {
  let w: World<Db>;
  beforeAll(async () => {
    w = await worldOn(dialect, {});
  }, 90_000);
  afterAll(() => w?.close());

  it('records a run', async () => {
    const rec = await w.run('triage', { ticket: 'My invoice is wrong, please help' });
    const { runs, attempts, nodeRuns } = w.db.t;
    const row = (await w.db.q.select().from(runs).where(eq(runs.id, rec.id)))[0]!;
    expect(row.status).toBe(rec.status);
    const as = await w.db.q.select().from(attempts).where(eq(attempts.runId, rec.id));
    const ns = await w.db.q.select().from(nodeRuns).where(eq(nodeRuns.runId, rec.id));
    console.log(dialect, rec.status, as.length, ns.length, ns.map((n) => `${n.nodeId}:${n.ord}`).join(','));
    expect(as.length).toBeGreaterThan(0);
    expect(row.owner).toBeTruthy();
  });
});
