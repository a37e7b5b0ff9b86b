// Who a command runs as, and the caller's limits a run it starts is held to (lib/contracts/
// caller-limits.ts): a shell on the server, `cli:<login>`, which callerLimits holds to no run limit
// and no budget — asked all the same, so every door goes through the one check.
import { cliAuthor } from '@/db/snapshot-queries';
import type { Db } from '@/db/types';
import { callerLimits, type CallerRefusal } from '@/lib/contracts/caller-limits';

type Env = Readonly<Record<string, string | undefined>>;

/** The command's author (`cli:<login>`) and, should callerLimits refuse it a run start, the refusal. */
export async function cliRunStart(db: Db, env?: Env): Promise<{ author: string; refused: CallerRefusal | null }> {
  const author = cliAuthor();
  return { author, refused: await callerLimits(db, author, 'run-start', { env }) };
}
