// `aqven limits --simulate` looks up the usage of the answers its simulator cut off mid-body before
// it exits, as `aqven run` does, and leaves none pending for a later process to ask a real
// provider about (DESIGN: Usage unknown, never zero, "Looked up afterwards").
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDatabase, openDatabase } from '@/db/client';
import { captureIo } from '@/lib/cli/io';
import { runLimits } from '@/lib/cli/limits';
import type { LimitsReport } from '@/lib/limits/probe';
import { copyShowcase } from '../helpers/showcase';

let dir: string;

beforeAll(() => {
  dir = copyShowcase();
  // a third of the answers dropped, half of those mid-body after the headers (usage unknown, its generation named)
  writeFileSync(
    join(dir, 'aqven.yaml'),
    'apiVersion: "aqven/v1"\nkind: "Project"\nname: "showcase"\nsimulate:\n  seed: 7\n  chaos: { drop: 0.3 }\n  limits:\n    "google/gemini-2.5-flash-lite": { depth: 5, list: 40, enum: 30 }\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('aqven limits --simulate and the usage of cut-off answers', () => {
  it('looks them up from its simulator before it exits: none is left pending', async () => {
    const io = captureIo();
    await runLimits('openrouter:google/gemini-2.5-flash-lite', { project: dir, simulate: true, dimension: 'depth', trials: '3', json: true }, io, { env: {} });
    const report = JSON.parse(io.stdout) as LimitsReport;
    const db = await openDatabase(join(dir, '.aqven', 'aqven.db'));
    try {
      const { attempts, transportTries } = db.t;
      const states = await db.q
        .select({ state: transportTries.usageLookup })
        .from(transportTries)
        .innerJoin(attempts, eq(attempts.id, transportTries.attemptId))
        .where(eq(attempts.runId, report.runId));
      const looked = states.map((s) => s.state).filter((s) => s !== null);
      expect(looked.length).toBeGreaterThan(0);
      expect(looked).not.toContain('pending');
      expect(looked).toContain('found');
    } finally {
      await closeDatabase(db);
    }
    expect(io.stderr).not.toContain('is not known yet');
  }, 120_000);
});
