// What a stop puts a run in (DESIGN: Storage, "Leases", "Durable points"): the phase decides how the
// run is closed — ended interrupted, handed back unended, failed cannot_record, or given up as lost.
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '@/db/run-lease';
import { StorageError } from '@/db/storage-error';
import { RunHandedBack, RunInterruptedError } from './run-errors';
import { isStopped, stoppedBy, stopWords } from './run-phase';

describe('stoppedBy', () => {
  it('names the phase after what stopped the run', () => {
    expect(stoppedBy(new RunInterruptedError('interrupted (SIGINT)')).kind).toBe('interrupted');
    expect(stoppedBy(new Error('aborted')).kind).toBe('interrupted');
    expect(stoppedBy(new RunHandedBack('draining')).kind).toBe('handed-back');
    expect(stoppedBy(new StorageError('disk full', '/x.db', 'SQLITE_FULL')).kind).toBe('unrecordable');
    expect(stoppedBy(new LeaseLostError('r1', '/x.db')).kind).toBe('lost');
  });

  it('a running or settling run is not stopped; every stop phase is', () => {
    expect(isStopped({ kind: 'running' })).toBe(false);
    expect(isStopped({ kind: 'settling' })).toBe(false);
    expect(isStopped(stoppedBy(new RunHandedBack('draining')))).toBe(true);
  });
});

describe('stopWords', () => {
  it('a storage failure is cannot_record; any other stop reads as the run interrupted', () => {
    expect(stopWords(new StorageError('disk full', '/x.db', 'SQLITE_FULL'))).toMatchObject({ code: 'cannot_record', message: 'disk full' });
    expect(stopWords(new RunHandedBack('draining'))).toMatchObject({ code: 'interrupted', message: 'the run was handed back (draining); another worker resumes it' });
    expect(stopWords(new Error('gone'))).toMatchObject({ code: 'interrupted', message: 'gone' });
  });
});
