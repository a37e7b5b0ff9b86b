// Short run ids (DESIGN: The dashboard, "Short run ids and search"): the first 8 characters of a
// run id — a UUID's first group, about four billion values — stand for the run wherever its full
// id is taken (the run page, GET /api/runs/:id, `aqven show`, `aqven cancel`). A prefix that names
// more than one run is never guessed at: the runs it names are listed. Pure: the CLI, the API and
// the pages share it.

/** how many characters of a run id are shown, and suffice to name a run */
export const SHORT_RUN_ID_LENGTH = 8;

/** a shorter prefix names too many runs to be worth looking up */
export const RUN_ID_PREFIX_MIN = 4;

/** The run id as shown: its first 8 characters (an id that short or shorter, whole). */
export function shortRunId(id: string): string {
  return id.length > SHORT_RUN_ID_LENGTH ? id.slice(0, SHORT_RUN_ID_LENGTH) : id;
}

/**
 * `text` as a run id prefix to look up — hex digits and dashes, a hex digit first, 4 to 36
 * characters, lowercased as `randomUUID` writes ids — or null when it cannot be one.
 */
export function runIdPrefix(text: string): string | null {
  const p = text.trim().toLowerCase();
  return p.length >= RUN_ID_PREFIX_MIN && p.length <= 36 && /^[0-9a-f][0-9a-f-]*$/.test(p) ? p : null;
}
