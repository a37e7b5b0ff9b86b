// The dashboard's own session (lib/server/session.ts) over a fresh showcase copy with simulated
// providers and no run-start limit, for tests that call its server actions and routes in the test
// process. Call it at the top of the file (it saves the variables it sets, restored by close()).
import type { Session } from '@/lib/flow/session';
import type { ScriptMap } from '@/lib/sim/types';
import { saveEnv } from './saved-env';
import { copyShowcase, FLASH_LITE, GPT_OSS } from './showcase';

/** The classifier's model answers, the writer's refuses: a triage run's draft node fails (and fails again when replayed). */
export const DRAFT_REFUSES: ScriptMap = { [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'refusal' }] };

export function simulatedDashboard() {
  const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL', 'AQVEN_RUNS_PER_MINUTE']);
  const server = () => import('@/lib/server/session');
  return {
    server,
    /** the session, on a showcase copy whose folder this returns too; its simulator playing `scripts` when given */
    async open(o: { scripts?: ScriptMap } = {}): Promise<{ session: Session; dir: string }> {
      const dir = copyShowcase();
      process.env.AQVEN_PROJECT = dir;
      process.env.AQVEN_SIMULATE = '1';
      delete process.env.AQVEN_DATABASE_URL;
      delete process.env.AQVEN_RUNS_PER_MINUTE;
      const session = await (await server()).serverSession();
      if (o.scripts) session.simulated!.sim.loadScripts(o.scripts);
      return { session, dir };
    },
    /** ends the session (its simulator, its database) and puts the variables back */
    async close(): Promise<void> {
      await (await server()).closeServerSessionForTests();
      restoreEnv();
    },
  };
}
