// Short run ids (DESIGN: The dashboard, "Short run ids"): run ids are UUID version 7, the time
// first (lib/shared/record-id.ts), so the short id people see and type is the first 8 characters
// of the id's last group — random in v7 and v4 alike, about four billion values. It stands for the
// run wherever its full id is taken (the run page, GET /api/runs/:id, `aqven show`, `aqven
// cancel`), as does a prefix of the whole id (the short id older runs were shown with). A prefix
// that names more than one run is never guessed at: the runs it names are listed. Pure: the CLI,
// the API and the pages share it.

/** how many characters of a run id are shown, and suffice to name a run */
export const SHORT_RUN_ID_LENGTH = 8;

/** a shorter prefix names too many runs to be worth looking up */
export const RUN_ID_PREFIX_MIN = 4;

/** where a UUID's last group starts: its short id, and the runs index `runs_id_tail_idx`, begin there */
export const RUN_ID_TAIL_START = 24;

/** the last group's length: a longer query cannot be a prefix of it */
const RUN_ID_TAIL_LENGTH = 12;

const UUID_SHAPED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Where `id`'s short id is: [start, end) — the first 8 characters of a UUID's last group; of any
 * other id (tests name runs `run-1`), its first 8 characters, or all of it when that short.
 */
export function shortRunIdSpan(id: string): [start: number, end: number] {
  if (UUID_SHAPED.test(id)) return [RUN_ID_TAIL_START, RUN_ID_TAIL_START + SHORT_RUN_ID_LENGTH];
  return [0, Math.min(id.length, SHORT_RUN_ID_LENGTH)];
}

/** The run id as shown: the first 8 characters of a UUID's last group (any other id: its first 8, or all of it). */
export function shortRunId(id: string): string {
  return id.slice(...shortRunIdSpan(id));
}

/**
 * `text` as a run id prefix to look up — hex digits and dashes, a hex digit first, 4 to 36
 * characters, lowercased as ids are written — or null when it cannot be one.
 */
export function runIdPrefix(text: string): string | null {
  const p = text.trim().toLowerCase();
  return p.length >= RUN_ID_PREFIX_MIN && p.length <= 36 && /^[0-9a-f][0-9a-f-]*$/.test(p) ? p : null;
}

/** Whether `prefix` (as runIdPrefix gives it) can also be the start of a UUID's last group — a short id: 4 to 12 hex digits. */
export function isRunIdTailPrefix(prefix: string): boolean {
  return prefix.length <= RUN_ID_TAIL_LENGTH && /^[0-9a-f]+$/.test(prefix);
}

/**
 * What an ambiguous id or prefix names, after the text itself: `names 2 runs (by the start of
 * their id or of their short id)` — one wording for the run page, the API's 409 and the CLI.
 */
export function ambiguousRunIdWords(count: number, more: boolean): string {
  return `names ${more ? 'more than ' : ''}${count} runs (by the start of their id or of their short id)`;
}
