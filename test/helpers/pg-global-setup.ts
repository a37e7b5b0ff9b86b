// Vitest's global setup (DESIGN: Storage, "The PostgreSQL test cluster"): one throwaway PostgreSQL
// cluster for the whole test run, unless AQVEN_TEST_DATABASE_URL names a server already; and in it
// one template database migrated once, which every test file copies into a database of its own
// (testDatabase({ migrated: true }), openTestDb('pg')). Without PostgreSQL installed the run stops
// here with one line saying what to install.
import { migratePg } from '../../db/pg';
import { createTemplateDatabase, startPgCluster, TEMPLATE_DB_ENV, type PgCluster } from './pg-cluster';

let cluster: PgCluster | null = null;
let dropTemplate: (() => Promise<void>) | null = null;

export async function setup(): Promise<void> {
  // the run's other project that needs it (integration and integration-isolated) made it already: its teardown ends it
  if (process.env[TEMPLATE_DB_ENV]) return;
  if (!process.env.AQVEN_TEST_DATABASE_URL) {
    cluster = await startPgCluster();
    process.env.AQVEN_TEST_DATABASE_URL = cluster.url;
    console.log(`PostgreSQL test cluster on 127.0.0.1:${cluster.port}, started in ${cluster.startupMs} ms`);
  }
  const template = await createTemplateDatabase(process.env.AQVEN_TEST_DATABASE_URL, migratePg);
  process.env[TEMPLATE_DB_ENV] = template.name;
  dropTemplate = template.drop;
}

export async function teardown(): Promise<void> {
  if (!cluster && !dropTemplate) return;
  // a given server keeps no template behind; a throwaway cluster goes whole
  if (cluster) await cluster.stop();
  else await dropTemplate?.();
  cluster = dropTemplate = null;
  delete process.env[TEMPLATE_DB_ENV];
}
