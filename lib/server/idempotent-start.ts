// Never start a run twice (DESIGN: The dashboard, "Calling AQVEN from a service"): what an
// Idempotency-Key of `POST /api/runs` finds — the run an earlier request with the same key and body
// started, another body (422), an earlier request still starting its run — and the claim of a new
// key, decided by the key's primary key (db/idempotency-queries.ts). A claim whose request died
// before it set its run is taken over after CLAIM_STALE_MS; a key older than IDEMPOTENCY_TTL_MS
// names nothing any more.
import 'server-only';
import { createHash } from 'node:crypto';
import { claimKey, dropKey, storedKey } from '@/db/idempotency-queries';
import type { Db } from '@/db/types';
import { IDEMPOTENCY_TTL_MS } from '@/lib/contracts/idempotency-key';
import { sleepFor } from '@/lib/flow/run-event-source';
import { nextPollMs } from '@/lib/flow/run-wait';

/** how long a request waits for an earlier one with its key to start the run, before 409 */
export const IN_FLIGHT_WAIT_MS = 5000;
/** a claim with no run after this long was left by a request that died: taken over */
export const CLAIM_STALE_MS = 60_000;

export interface KeyedRequest {
  /** who sent it, as runs record it (noteAuthor: `open:dashboard` for the open dashboard) */
  caller: string;
  key: string;
  /** startFingerprint of its flow and input */
  fingerprint: string;
}

export type PriorRequest = { kind: 'none' } | { kind: 'run'; runId: string } | { kind: 'reused' } | { kind: 'in-flight' };

export interface KeyClock {
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** JSON with every object's keys sorted: one text per value, however its keys were ordered or spaced. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What "the same body" means for a key: sha256 of the flow and input as canonical JSON. */
export function startFingerprint(flow: string, input: unknown): string {
  return createHash('sha256').update(canonical({ flow, input })).digest('hex');
}

/**
 * What an earlier request with this key left: its run, another body, or one still starting its run
 * (waited for, at most IN_FLIGHT_WAIT_MS); `none` when there is none — an expired or abandoned row
 * is dropped first.
 */
export async function priorRequest(db: Db, k: KeyedRequest, o: KeyClock = {}): Promise<PriorRequest> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? sleepFor;
  const until = now() + IN_FLIGHT_WAIT_MS;
  let interval: number | null = null;
  for (;;) {
    const row = await storedKey(db, k.caller, k.key);
    if (!row) return { kind: 'none' };
    const age = now() - row.createdAt;
    if (age >= IDEMPOTENCY_TTL_MS || (row.runId === null && age >= CLAIM_STALE_MS)) {
      await dropKey(db, k.caller, k.key, row.createdAt);
      return { kind: 'none' };
    }
    if (row.fingerprint !== k.fingerprint) return { kind: 'reused' };
    if (row.runId !== null) return { kind: 'run', runId: row.runId };
    const left = until - now();
    if (left <= 0) return { kind: 'in-flight' };
    interval = nextPollMs(interval);
    await sleep(Math.min(interval, left));
  }
}

/** Claims the key for this request (`claimed`, with the row's time), else what holds it. */
export async function claimOrPrior(db: Db, k: KeyedRequest, o: KeyClock = {}): Promise<Exclude<PriorRequest, { kind: 'none' }> | { kind: 'claimed'; at: number }> {
  const now = o.now ?? Date.now;
  // a row that vanishes between our insert and our read (its start was refused) lets us try again
  for (let tries = 0; tries < 3; tries++) {
    const at = now();
    if (await claimKey(db, { ...k, now: at })) return { kind: 'claimed', at };
    const prior = await priorRequest(db, k, o);
    if (prior.kind !== 'none') return prior;
  }
  return { kind: 'in-flight' };
}
