// The run record's fields page (docs/run-record-fields.md) comes from the schema the API answers
// with; this checks that schema against the record buildRunRecord really makes: every field the
// record has is described, and every described field is in the record.
import { describe, expect, it } from 'vitest';
import type { AttemptFacts, RunFacts } from '@/db/types';
import { buildRunRecord } from '@/lib/flow/run-record';
import { formatRunRecordFields, runRecordFields } from './run-record-fields';

const USAGE = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

/** an attempt with every optional field set, so each shows in the record */
const attempt: AttemptFacts = {
  seq: 1,
  model: 'openrouter:m',
  chainIndex: 0,
  answerNo: 1,
  outcome: 'ok',
  finishReason: 'stop',
  nativeFinishReason: 'STOP',
  finishNote: null,
  cause: 'invalid_output',
  action: 'repair',
  request: [{ role: 'user', content: 'hi' }],
  responseText: '{}',
  error: { kind: 'invalid_output', message: 'no', detail: null },
  validationErrors: [{ pointer: '/a', message: 'required' }],
  discarded: true,
  streamedText: null,
  usage: USAGE,
  usageUnknown: false,
  reasoningTokens: 2,
  costSource: 'provider',
  startedAt: 1,
  finishedAt: 2,
  tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt: 1, finishedAt: 2, discardedText: null, usageLookup: null }],
};

const facts: RunFacts = {
  id: 'r',
  flow: 'triage',
  status: 'failed',
  input: {},
  output: null,
  error: { code: 'invalid_output', node: 'n', message: 'no', hint: 'h' },
  turns: 1,
  startedAt: 1,
  finishedAt: 2,
  nodes: [
    {
      id: 'n',
      agent: 'a',
      turn: 1,
      status: 'failed',
      output: null,
      error: { code: 'invalid_output', message: 'no', hint: 'h' },
      policy: { chain: ['openrouter:m'], retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail', strict: false },
      attempts: [attempt],
      startedAt: 1,
      finishedAt: 2,
    },
  ],
};

/** every field path of a JSON value, as the page writes them (`nodes[].attempts[].usage.costUsd`) */
function paths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.length ? paths(value[0], `${prefix}[]`) : [];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    // input and output are the flow's own JSON: their insides are no fields of the record
    if (k === 'input' || k === 'output') return [path];
    return [path, ...paths(v, path)];
  });
}

describe("the run record's fields", () => {
  const rows = runRecordFields();

  it('describe every field buildRunRecord writes, and no other', () => {
    const record = buildRunRecord({
      ...facts,
      kind: 'flow',
      replayOf: null,
      replayNode: null,
      startedBy: 'cli:ana',
      projectHash: 'abc',
      snapshotId: null,
      traceId: 'f'.repeat(32),
    });
    expect(rows.map((r) => r.path).sort()).toEqual(paths(record).sort());
  });

  it('each with a type and a description, and whether it can be null', () => {
    for (const r of rows) {
      expect(r.type, r.path).not.toBe('');
      expect(r.description.length, r.path).toBeGreaterThan(5);
    }
    const byPath = new Map(rows.map((r) => [r.path, r]));
    expect(byPath.get('finishedAt')).toMatchObject({ type: 'string', nullable: true });
    expect(byPath.get('traceId')).toMatchObject({ nullable: false, optional: true });
    expect(byPath.get('nodes[].attempts[].costSource')).toMatchObject({ type: '"provider" \\| "catalogue" \\| "none"', nullable: true });
    expect(formatRunRecordFields(rows)).toContain('| `costSource` | `provider` \\| `catalogue` \\| `none` | null |');
  });
});
