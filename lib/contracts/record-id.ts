// A run id, node id or failure group signature a request names: a short id or prefix is resolved
// later (db/run-id-queries.ts), so here it is only bounded.
import { z } from 'zod';
import { FIELD } from './refusal';

/** an id's length: a full run id is 36 characters, a signature 16 */
export const MAX_ID_CHARS = 200;

export const recordId = z
  .string({ error: `${FIELD} is missing` })
  .min(1, `${FIELD} is empty`)
  .max(MAX_ID_CHARS, `${FIELD} is at most ${MAX_ID_CHARS} characters`);
