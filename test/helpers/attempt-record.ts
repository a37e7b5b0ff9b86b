// A stored attempt for the tests that seed the run history by hand (db/*-queries tests, the stored run
// as its record): an ok answer of one try, its fields overridden where a test needs another.
import type { AttemptRecord } from '@/lib/engine/types';

export const ATTEMPT_USAGE = { inputTokens: 10, outputTokens: 5, costUsd: 0.001 };

/** Attempt `seq` of `openrouter:a`: ok, one 200 try, started at 1000 + seq and 10 ms long, unless `over` says otherwise. */
export function attemptRecord(seq: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  const startedAt = over.startedAt ?? 1000 + seq;
  const finishedAt = over.finishedAt ?? startedAt + 10;
  return {
    seq,
    model: 'openrouter:a',
    chainIndex: 0,
    answerNo: seq,
    outcome: 'ok',
    finishReason: 'stop',
    cause: null,
    action: 'none',
    request: [{ role: 'user', content: 'hi' }],
    responseText: '{}',
    error: null,
    validationErrors: [],
    discarded: false,
    streamedText: null,
    usage: ATTEMPT_USAGE,
    startedAt,
    finishedAt,
    tries: [{ tryNo: 1, status: 200, error: null, retryAfterMs: null, waitedMs: 0, startedAt, finishedAt }],
    ...over,
  };
}
