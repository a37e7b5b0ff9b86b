// The database a command opens itself (db/command-database.ts): named, reached, opened, migrated and
// its failures said through db/'s answers, on both dialects — what the commands outside db/ used to
// decide by asking which database a target names.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../test/helpers/pg-cluster';
import { closeDb, openDatabase } from './client';
import { databaseExists, describeTarget, migrateDatabase, openForCommand, openSharedForCommand, readFailure, reachDatabase, statusWords } from './command-database';
import { openedPg } from './pg';
import { databaseStatus, DatabaseUnreachableError, queueSchemaVersion, schemaVersion } from './status-queries';
import { StorageError } from './storage-error';
import type { SqliteDb } from './types';

const dir = mkdtempSync(join(tmpdir(), 'aqven-command-db-'));

describe('naming a target', () => {
  it('a SQLite file by its absolute path, a server by its URL without the password', () => {
    expect(describeTarget('runs.db')).toEqual({ where: resolve('runs.db'), kind: 'SQLite' });
    expect(describeTarget(' postgres://ana:s3cret@db.internal:5432/aqven ')).toEqual({ where: 'postgres://ana:***@db.internal:5432/aqven', kind: 'PostgreSQL' });
  });

  it('a SQLite file not created yet holds no database; a server answers for itself', () => {
    expect(databaseExists(join(dir, 'none.db'))).toBe(false);
    expect(databaseExists('postgresql://h/db')).toBe(true);
  });

  it("aqven db status's words: the kind, and why there is no queue", async () => {
    const sqlite = await databaseStatus(join(dir, 'none.db'));
    expect(statusWords(sqlite)).toEqual({ kind: 'SQLite', noQueue: 'SQLite: a run runs in the process that starts it' });
    expect(statusWords({ ...sqlite, dialect: 'pg' })).toEqual({ kind: 'PostgreSQL', noQueue: 'graphile-worker schema not installed: `aqven db migrate`' });
  });
});

describe('SQLite', () => {
  it('needs no reaching; is migrated and opened for the command, and closed after it', async () => {
    const file = join(dir, 'runs.db');
    await reachDatabase(file);
    expect(databaseExists(file)).toBe(false);
    await migrateDatabase(file);
    expect(databaseExists(file)).toBe(true);
    const opened = await openForCommand(file);
    expect((await schemaVersion(opened.db)).applied).toBeGreaterThan(0);
    expect(await queueSchemaVersion(opened.db)).toBeNull();
    await opened.close();
    expect((opened.db as SqliteDb).$client.open).toBe(false);
  });

  it('is not shared: no queue for a command to open', async () => {
    expect(await openSharedForCommand({})).toBeNull();
    expect(await openSharedForCommand({ AQVEN_DATABASE_URL: join(dir, 'runs.db') })).toBeNull();
  });

  it("a file that is no database: the read's failure is its StorageError", async () => {
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'not a database, just text that is long enough to be read as a header…'.repeat(20));
    const err = await openDatabase(junk).then(
      () => null,
      (e: unknown) => e,
    );
    expect(readFailure(junk, err)).toBeInstanceOf(StorageError);
    expect(readFailure(junk, new Error('odd'))).toBeInstanceOf(DatabaseUnreachableError);
  });
});

describe('PostgreSQL', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await testDatabase();
  }, 90_000);
  afterAll(async () => {
    if (tdb) await closeDb(tdb.url);
    await tdb?.stop();
  });

  it('is migrated with its job queue, reached and opened for a command; the pool is ended after it unless the process held it', async () => {
    await reachDatabase(tdb.url);
    await migrateDatabase(tdb.url);
    const opened = await openForCommand(tdb.url);
    expect(await queueSchemaVersion(opened.db)).not.toBeNull();
    await opened.close();
    expect(openedPg(tdb.url)).toBeUndefined();

    const held = await openDatabase(tdb.url);
    const again = await openSharedForCommand({ AQVEN_DATABASE_URL: tdb.url });
    expect(again?.db).toBe(held);
    await again!.close();
    expect(openedPg(tdb.url)).toBeDefined();
  });

  it('a server that cannot be reached is one line naming it, its password hidden', async () => {
    const down = 'postgres://ana:s3cret@127.0.0.1:1/none';
    const err = await reachDatabase(down).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatabaseUnreachableError);
    expect((err as Error).message).toMatch(/^cannot connect to the PostgreSQL database postgres:\/\/ana:\*\*\*@127\.0\.0\.1:1\/none: /);
    await expect(openForCommand(down)).rejects.toBeInstanceOf(DatabaseUnreachableError);
  });
});
