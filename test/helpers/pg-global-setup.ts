// Vitest's global setup (DESIGN: Storage, "The PostgreSQL test cluster"): one throwaway PostgreSQL
// cluster for the whole test run, unless AQVEN_TEST_DATABASE_URL names a server already; every
// test file then makes its own database in it (testDatabase()). Without PostgreSQL installed the
// run stops here with one line saying what to install.
import { startPgCluster, type PgCluster } from './pg-cluster';

let cluster: PgCluster | null = null;

export async function setup(): Promise<void> {
  if (process.env.AQVEN_TEST_DATABASE_URL) return;
  cluster = await startPgCluster();
  process.env.AQVEN_TEST_DATABASE_URL = cluster.url;
  console.log(`PostgreSQL test cluster on 127.0.0.1:${cluster.port}, started in ${cluster.startupMs} ms`);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
