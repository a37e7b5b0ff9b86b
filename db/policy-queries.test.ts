import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from './client';
import { listPolicyRevisions, recordPolicyRevision } from './policy-queries';

const freshDb = () => openDb(join(mkdtempSync(join(tmpdir(), 'aqven-policy-q-')), 'aqven.db'));

describe('policy revisions', () => {
  it('numbers revisions per agent and lists them newest first', () => {
    const db = freshDb();
    recordPolicyRevision(db, { agent: 'classifier', yaml: 'a', diff: '-x\n+a', createdAt: 1 });
    recordPolicyRevision(db, { agent: 'writer', yaml: 'w', diff: '', createdAt: 2 });
    const r = recordPolicyRevision(db, { agent: 'classifier', yaml: 'b', diff: '-a\n+b', createdAt: 3 });
    expect(r.revision).toBe(2);
    expect(listPolicyRevisions(db, 'classifier').map((x) => [x.revision, x.yaml])).toEqual([
      [2, 'b'],
      [1, 'a'],
    ]);
  });
});
