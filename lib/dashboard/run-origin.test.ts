import { describe, expect, it } from 'vitest';
import { originLine, projectVersion } from './run-origin';

const HASH = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

describe('the origin of a run as the header and `aqven show` print it', () => {
  it('names the snapshot in PostgreSQL mode, else the first 12 characters of the hash, keeping the full hash', () => {
    expect(projectVersion({ snapshotId: 7, projectHash: HASH })).toEqual({ label: 'snapshot #7', hash: HASH });
    expect(projectVersion({ snapshotId: null, projectHash: HASH })).toEqual({ label: 'a1b2c3d4e5f6', hash: HASH });
    expect(projectVersion({ snapshotId: null, projectHash: null })).toBeNull();
    expect(projectVersion({})).toBeNull(); // a run recorded before either was kept
  });

  it('says who started it when known, and nothing for a run that knows neither', () => {
    expect(originLine({ startedBy: 'cli:ana', projectHash: HASH, snapshotId: null })).toBe('started by cli:ana · project a1b2c3d4e5f6');
    expect(originLine({ startedBy: null, projectHash: null, snapshotId: 3 })).toBe('project snapshot #3');
    expect(originLine({ startedBy: null, projectHash: null, snapshotId: null })).toBeNull();
  });
});
