// A file the YAML parser cannot parse within the stack (a block mapping of thousands of lines left
// inside an unclosed flow collection, ~30 KB: under the size cap) is answered with a positioned
// E_LIMIT, never a RangeError out of `aqven check` (found by lib/project/fuzz.test.ts).
import { describe, expect, it } from 'vitest';
import { writeProject } from '@/test/helpers/fixture-project';
import { loadProject } from './index';

describe('a file that overflows the YAML parser', () => {
  it('is one E_LIMIT at its start', async () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `      k${i}: ${i}\n`).join('');
    const dir = await writeProject({ 'aqven.yaml': `apiVersion: "aqven/v1"\nkind: "Project"\nsimulate:\n  chaos: { drop: 0.01,\n    many:\n${keys}` });
    const { project, diagnostics } = await loadProject(dir, { env: { OPENROUTER_API_KEY: 'sk-test' } });
    expect(project).toBeNull();
    expect(diagnostics).toEqual([
      expect.objectContaining({ file: 'aqven.yaml', line: 1, col: 1, code: 'E_LIMIT', path: [], message: expect.stringContaining('cannot be parsed') }),
    ]);
  });
});
