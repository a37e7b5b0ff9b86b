// Replay one node, or a whole failure group (DESIGN: The dashboard, "Replay with the current
// policy"): the run and node (or the group and since when), and the cost cap. The replay forms
// (lib/actions/replay-node.ts, replay-group.ts) and `aqven replay RUN NODE --cap USD`
// (lib/cli/replay.ts) parse the same values with these schemas.
import { z } from 'zod';
import { FIELD } from './refusal';
import { recordId } from './record-id';
import { usdAmount } from './usd-amount';

/** the highest cap accepted, in USD: a typo of a few zeros should not be a blank cheque */
export const MAX_CAP_USD = 1000;
/** replays a batch runs at once */
export const BATCH_CONCURRENCY = 4;
/** the most nodes one batch replays (the newest of the group) */
export const BATCH_MAX_NODES = 50;
const cap = usdAmount(MAX_CAP_USD);

/** Replay one node of a finished run: its id, short id or a unique prefix, the node, the cap. */
export const replayNodeSchema = z.object({ runId: recordId, node: recordId, cap });

/** Replay the newest failed nodes of a failure group since a time (ms), under one cap for the batch. */
export const replayGroupSchema = z.object({
  sig: recordId,
  since: z.coerce
    .number({ error: `${FIELD} is a time in milliseconds` })
    .int(`${FIELD} is a time in milliseconds`)
    .nonnegative(`${FIELD} is a time in milliseconds`),
  cap,
});

export type ReplayNodeField = keyof z.input<typeof replayNodeSchema>;
export const REPLAY_NODE_FIELDS: readonly ReplayNodeField[] = ['runId', 'node', 'cap'];
export type ReplayGroupField = keyof z.input<typeof replayGroupSchema>;
export const REPLAY_GROUP_FIELDS: readonly ReplayGroupField[] = ['sig', 'since', 'cap'];
