// Which database needs AQVEN_AUTH_SECRET (db/auth-secret.ts) is decided by the one answer db/ gives to
// "is this a shared (PostgreSQL) database" — sharedDatabaseUrl — so an AQVEN_DATABASE_URL naming no
// database we open is refused here as everywhere, never taken for SQLite mode (which needs no key).
import { describe, expect, it } from 'vitest';
import { AuthSecretError, authSecretForEnv } from './auth-secret';
import { DatabaseUrlError } from './storage-error';

const KEY = 'k'.repeat(64);

describe('authSecretForEnv', () => {
  it('SQLite (no URL, or a file path): no key needed; a given one is checked and kept', () => {
    expect(authSecretForEnv({})).toBeNull();
    expect(authSecretForEnv({ AQVEN_DATABASE_URL: '/srv/aqven/runs.db' })).toBeNull();
    expect(authSecretForEnv({ AQVEN_AUTH_SECRET: ` ${KEY} ` })).toBe(KEY);
    expect(() => authSecretForEnv({ AQVEN_AUTH_SECRET: 'short' })).toThrow(AuthSecretError);
  });

  it('PostgreSQL (postgres:// or postgresql://, any case, spaces around): the key is required', () => {
    for (const url of ['postgres://u:p@h/db', ' POSTGRESQL://h/db?sslmode=require ']) {
      expect(() => authSecretForEnv({ AQVEN_DATABASE_URL: url }), url).toThrow(AuthSecretError);
      expect(authSecretForEnv({ AQVEN_DATABASE_URL: url, AQVEN_AUTH_SECRET: KEY }), url).toBe(KEY);
    }
  });

  it('a URL of another database, or a postgres:// URL node-postgres cannot read, is refused, not SQLite mode', () => {
    expect(() => authSecretForEnv({ AQVEN_DATABASE_URL: 'mysql://user:pw-9@db/aqven' })).toThrow(DatabaseUrlError);
    expect(() => authSecretForEnv({ AQVEN_DATABASE_URL: 'postgres://u:p@h:99999999/db' })).toThrow(DatabaseUrlError);
  });
});
