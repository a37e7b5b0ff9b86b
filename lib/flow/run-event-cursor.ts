// Where a client of a run's events is (DESIGN: "A run's events"): what it has been sent of the run,
// of each node and of each attempt — the id of every event, sent back as `Last-Event-ID` to resume
// without a repeat or a gap. A stage per run, node and attempt; per attempt in flight the tries sent
// and the length and a hash of its text sent (text can start afresh: a transport re-try mid-stream,
// the raw answer replacing the redacted batches at the attempt's end). Pure: the browser computes
// the cursor of the run it was rendered with (cursorOf in run-events.ts).

/** an attempt in flight: [stage (1 started, 2 ended), tries sent, text length sent, hash of that text] */
export type AttemptMark = [stage: 1 | 2, tries: number, textLength: number, textHash: string];

/** a node: [stage (1 started, 2 ended), every attempt seq up to this one ended and sent, the others sent] */
export type NodeMark = [stage: 0 | 1 | 2, doneThrough: number, attempts: Record<string, AttemptMark>];

export interface Cursor {
  /** the run's id: a cursor is refused by another run's stream */
  i: string;
  /** 0 nothing sent, 1 queued, 2 started, 3 ended */
  r: 0 | 1 | 2 | 3;
  n: Record<string, NodeMark>;
  /** per model, the end of the last pause sent */
  p: Record<string, number>;
}

export const startCursor = (runId: string): Cursor => ({ i: runId, r: 0, n: {}, p: {} });

/** FNV-1a over UTF-16 code units: whether a client's text is still a prefix of the attempt's (not a secret) */
export function textHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}

function base64url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array {
  const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The id of an event: the cursor after it, as base64url JSON (header- and URL-safe). */
export function encodeCursor(c: Cursor): string {
  return base64url(new TextEncoder().encode(JSON.stringify(c)));
}

const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function isAttemptMark(x: unknown): x is AttemptMark {
  return Array.isArray(x) && x.length === 4 && (x[0] === 1 || x[0] === 2) && isCount(x[1]) && isCount(x[2]) && typeof x[3] === 'string';
}

function isNodeMark(x: unknown): x is NodeMark {
  return Array.isArray(x) && x.length === 3 && [0, 1, 2].includes(x[0] as number) && isCount(x[1]) && isRecord(x[2]) && Object.values(x[2]).every(isAttemptMark);
}

/** The cursor an event id of `runId`'s stream stands for; null for anything else (another run's, garbled). */
export function decodeCursor(id: string, runId: string): Cursor | null {
  let c: unknown;
  try {
    c = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(id)));
  } catch {
    return null;
  }
  if (!isRecord(c) || c.i !== runId || ![0, 1, 2, 3].includes(c.r as number) || !isRecord(c.n) || !isRecord(c.p)) return null;
  if (!Object.values(c.n).every(isNodeMark) || !Object.values(c.p).every(isCount)) return null;
  return c as unknown as Cursor;
}
