// AQVEN_DATABASE_URL as databaseTarget reads it (DESIGN: CLI, "Bad configuration is one line"): a
// PostgreSQL URL or a SQLite path; a URL of any other database is refused, never made a folder.
import { describe, expect, it } from 'vitest';
import { databaseTarget, databaseUrl } from './client';
import { DatabaseUrlError } from './storage-error';

describe('databaseUrl', () => {
  it('keeps a postgres:// or postgresql:// URL and a file path; unset is null and the project file is used', () => {
    expect(databaseUrl({ AQVEN_DATABASE_URL: ' postgres://a:b@h:5432/db ' })).toBe('postgres://a:b@h:5432/db');
    expect(databaseUrl({ AQVEN_DATABASE_URL: 'postgresql://h/db?sslmode=require' })).toBe('postgresql://h/db?sslmode=require');
    expect(databaseUrl({ AQVEN_DATABASE_URL: '/srv/aqven/runs.db' })).toBe('/srv/aqven/runs.db');
    expect(databaseUrl({ AQVEN_DATABASE_URL: 'data/runs.db' })).toBe('data/runs.db');
    expect(databaseUrl({ AQVEN_DATABASE_URL: '  ' })).toBeNull();
    expect(databaseTarget('p/.aqven/aqven.db', {})).toBe('p/.aqven/aqven.db');
  });

  it('refuses another scheme by its name only, the password never in the message', () => {
    for (const [url, scheme] of [
      ['mysql://user:pw-9@db/aqven', 'mysql'],
      ['SQLITE:///tmp/x.db', 'sqlite'],
      ['redis://:pw-9@cache', 'redis'],
    ] as const) {
      const err = (() => {
        try {
          databaseTarget('fallback.db', { AQVEN_DATABASE_URL: url });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(DatabaseUrlError);
      expect((err as Error).message).toMatch(new RegExp(`^AQVEN_DATABASE_URL is a ${scheme}:// URL; it must be a PostgreSQL URL`));
      expect((err as Error).message).not.toContain('pw-9');
    }
  });

  it('refuses a postgres:// URL node-postgres cannot parse, without repeating it', () => {
    expect(() => databaseUrl({ AQVEN_DATABASE_URL: 'postgres://u:pw-9@[bad/db' })).toThrow(/^AQVEN_DATABASE_URL is a postgres:\/\/ URL that cannot be read \(Invalid URL;/);
    expect(() => databaseUrl({ AQVEN_DATABASE_URL: 'postgres://u:pw-9@[bad/db' })).not.toThrow(/pw-9/);
  });
});
