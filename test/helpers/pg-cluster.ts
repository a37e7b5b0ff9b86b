// A throwaway PostgreSQL for tests (DESIGN: Storage, "The PostgreSQL test cluster"): `initdb` in a
// temp folder, the server on a unix socket in that folder and a free port on 127.0.0.1 only, trust
// auth, no fsync; stopped and deleted by `stop()`, at process exit, and by a watchdog if the
// process is killed. `initdb` refuses to run as root: as root the folder belongs to `postgres` and
// every PostgreSQL command runs through `runuser -u postgres --`.
//
// Use `testDatabase()` in a file's beforeAll: a fresh database in the cluster AQVEN_TEST_DATABASE_URL
// names, or else in a private cluster started for the file. `testDatabase({ migrated: true })`
// copies the template database the global setup migrated once for the run
// (AQVEN_TEST_TEMPLATE_DB, `CREATE DATABASE x TEMPLATE t`): a copy takes milliseconds, migrating
// each database took a second or more per file.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { chown, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, parse } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The one line a test needing PostgreSQL fails with when the binaries are missing. */
export const PG_MISSING =
  'PostgreSQL binaries not found (initdb and pg_ctl on PATH or in /usr/lib/postgresql/*/bin): install them with `apt-get install -y postgresql` (.ci/run does)';

/** Bounded waits: pg_ctl's own readiness wait, and the whole start. */
const READY_TIMEOUT_S = 30;
const COMMAND_TIMEOUT_MS = 60_000;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The folder holding initdb, pg_ctl and postgres: AQVEN_PG_BIN, PATH, then /usr/lib/postgresql/*\/bin newest first. */
export function findPgBin(): string | null {
  const fromPath = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const debian = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => `/usr/lib/postgresql/${v}/bin`)
    : [];
  for (const dir of [process.env.AQVEN_PG_BIN, ...fromPath, ...debian]) {
    if (!dir || !executable(join(dir, 'initdb'))) continue;
    // a symlink on PATH (/usr/local/bin/initdb → /usr/lib/postgresql/15/bin/initdb): use its real folder
    const real = dirname(realpathSync(join(dir, 'initdb')));
    if (['initdb', 'pg_ctl', 'postgres'].every((b) => executable(join(real, b)))) return real;
  }
  return null;
}

/** An Error that prints as its one line (no stack: the message says everything). */
function oneLine(message: string): Error {
  const err = new Error(message);
  err.stack = `Error: ${message}`;
  return err;
}

/** A port on 127.0.0.1 nothing listens on now (for a server a test starts as a process). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function passwdEntry(user: string): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** A temp base the `postgres` user can reach (every ancestor searchable by others), else /tmp. */
function tempBase(asOther: boolean): string {
  // the system's, not the test run's own folder (tmp-global-setup.ts), which is removed before the cluster stops
  const base = process.env.AQVEN_SYSTEM_TMPDIR || tmpdir();
  if (!asOther) return base;
  let dir = base;
  for (;;) {
    if ((statSync(dir).mode & 0o001) === 0) return '/tmp';
    if (dir === parse(dir).root) return base;
    dir = dirname(dir);
  }
}

export interface PgCluster {
  /** postgres://aqven@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** the folder holding the server's unix socket (`psql -h SOCKET_DIR -p PORT -U aqven postgres`) */
  socketDir: string;
  dataDir: string;
  /** milliseconds from the call to a server accepting connections */
  startupMs: number;
  /** stops the server and deletes its folder; safe to call twice */
  stop(): Promise<void>;
}

/** Starts a private cluster. Throws the one line PG_MISSING when PostgreSQL is not installed. */
export async function startPgCluster(): Promise<PgCluster> {
  const t0 = performance.now();
  const bin = findPgBin();
  if (!bin) throw oneLine(PG_MISSING);
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? passwdEntry('postgres') : null;
  if (asRoot && !owner) throw oneLine(`running as root needs a \`postgres\` user to run PostgreSQL: ${PG_MISSING.split(': ')[1]}`);

  const root = await mkdtemp(join(tempBase(asRoot), 'aqven-pg-'));
  const dataDir = join(root, 'data');
  const log = join(root, 'server.log');
  if (owner) await chown(root, owner.uid, owner.gid);
  /** argv of a PostgreSQL command, through runuser when root */
  const as = (cmd: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args]);
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C', TZ: 'UTC' };

  let stopped = false;
  let watchdog: number | undefined;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stopSync);
    const [cmd, args] = as('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '10']);
    if (existsSync(join(dataDir, 'postmaster.pid'))) spawnSync(cmd, args, { stdio: 'ignore', env, timeout: 15_000 });
    rmSync(root, { recursive: true, force: true });
    if (watchdog) {
      try {
        process.kill(watchdog);
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', stopSync);

  try {
    const [initCmd, initArgs] = as('initdb', ['-D', dataDir, '-U', 'aqven', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    await run(initCmd, initArgs, { env, timeout: COMMAND_TIMEOUT_MS });
    const port = await freePort();
    const serverOptions = [
      `-p ${port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${root}'`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=100',
    ].join(' ');
    const [ctlCmd, ctlArgs] = as('pg_ctl', ['start', '-D', dataDir, '-l', log, '-w', '-t', String(READY_TIMEOUT_S), '-o', serverOptions]);
    try {
      await run(ctlCmd, ctlArgs, { env, timeout: COMMAND_TIMEOUT_MS });
    } catch (err) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-5).join(' | ') : '';
      throw new Error(`PostgreSQL did not start: ${(err as Error).message.trim()} ${tail}`);
    }
    // if this process dies without its exit handler (SIGKILL), a watchdog stops the server and deletes the folder
    const [stopCmd, stopArgs] = as('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate']);
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${[stopCmd, ...stopArgs].map((a) => `'${a}'`).join(' ')} >/dev/null 2>&1; rm -rf '${root}'`;
    const dog = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore', env });
    dog.unref();
    watchdog = dog.pid;

    return {
      url: `postgres://aqven@127.0.0.1:${port}/postgres`,
      port,
      socketDir: root,
      dataDir,
      startupMs: Math.round(performance.now() - t0),
      async stop() {
        if (stopped) return;
        const [cmd, args] = as('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '10']);
        await run(cmd, args, { env, timeout: 15_000 }).catch(() => undefined);
        stopSync();
      },
    };
  } catch (err) {
    stopSync();
    throw err;
  }
}

/** The name of the run's template database: migrated once, copied by testDatabase({ migrated: true }). */
export const TEMPLATE_DB_ENV = 'AQVEN_TEST_TEMPLATE_DB';

/** The URL of database `name` on the server of `adminUrl`. */
function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function asAdmin(adminUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A database of the server of `adminUrl`, migrated by `migrate` (given its URL) and then left
 * without connections, as a template must be. Returns its name and a function dropping it.
 */
export async function createTemplateDatabase(adminUrl: string, migrate: (url: string) => Promise<void>): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `aqven_template_${randomBytes(6).toString('hex')}`;
  await asAdmin(adminUrl, `CREATE DATABASE ${name}`);
  await migrate(databaseUrl(adminUrl, name));
  return { name, drop: () => asAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export interface TestDatabase {
  /** a database of its own: empty, or migrated when asked */
  url: string;
  /** the private cluster's start-up, or null when AQVEN_TEST_DATABASE_URL was given */
  startupMs: number | null;
  /** drops the database, or stops the private cluster */
  stop(): Promise<void>;
}

/**
 * A fresh database for one test file: in the server AQVEN_TEST_DATABASE_URL names (a `postgres://`
 * URL of a user allowed to create databases), else in a private cluster. Empty, or with `migrated`
 * a copy of the run's migrated template (when the global setup made one; else empty, and the
 * first open migrates it).
 */
export async function testDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const given = process.env.AQVEN_TEST_DATABASE_URL;
  const cluster = given ? null : await startPgCluster();
  const adminUrl = given ?? cluster!.url;
  const name = `aqven_test_${randomBytes(6).toString('hex')}`;
  const template = given && opts.migrated ? process.env[TEMPLATE_DB_ENV] : undefined;
  await asAdmin(adminUrl, template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  return {
    url: databaseUrl(adminUrl, name),
    startupMs: cluster?.startupMs ?? null,
    async stop() {
      if (cluster) return cluster.stop();
      await asAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
