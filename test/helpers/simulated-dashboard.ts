// The dashboard's own session (lib/server/session.ts) over a fresh showcase copy with simulated
// providers and no run-start limit, for tests that call its server actions and routes in the test
// process. Call it at the top of the file (it saves the variables it sets, restored by close()).
import type { Session } from '@/lib/flow/session';
import { saveEnv } from './saved-env';
import { copyShowcase } from './showcase';

export function simulatedDashboard() {
  const restoreEnv = saveEnv(['AQVEN_PROJECT', 'AQVEN_SIMULATE', 'AQVEN_DATABASE_URL', 'AQVEN_RUNS_PER_MINUTE']);
  const server = () => import('@/lib/server/session');
  return {
    server,
    /** the session, on a showcase copy whose folder this returns too */
    async open(): Promise<{ session: Session; dir: string }> {
      const dir = copyShowcase();
      process.env.AQVEN_PROJECT = dir;
      process.env.AQVEN_SIMULATE = '1';
      delete process.env.AQVEN_DATABASE_URL;
      delete process.env.AQVEN_RUNS_PER_MINUTE;
      return { session: await (await server()).serverSession(), dir };
    },
    async close(): Promise<void> {
      await (await (await server()).serverSession()).close();
      restoreEnv();
    },
  };
}
