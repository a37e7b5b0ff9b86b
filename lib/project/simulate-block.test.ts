// aqven.yaml's `simulate:` block and `aqven sim --scenario` read one format (lib/sim/script-schema.ts):
// the simulator examples of the READMEs pass both, read straight out of the READMEs so a drift fails.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '@/lib/sim/scenario';
import { positionOf, writeProject } from '@/test/helpers/fixture-project';
import { loadProject } from './index';

const ROOT = resolve(__dirname, '../..');
const KEY = { OPENROUTER_API_KEY: 'sk-test' };

/** The first ```yaml block after the heading `heading` of a markdown file. */
function yamlBlock(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file}: no heading "${heading}"`);
  const block = /```yaml\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error(`${file}: no yaml block under "${heading}"`);
  return block[1];
}

const aqvenYaml = (simulate: string) =>
  `apiVersion: "aqven/v1"\nkind: "Project"\nname: "fixture"\nsimulate:\n${simulate
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n')}`;

const EXAMPLES = [
  { file: 'README.md', heading: '## The provider simulator' },
  { file: 'lib/sim/README.md', heading: '## Scripts' },
];

describe.each(EXAMPLES)('the simulator example of $file', ({ file, heading }) => {
  const example = yamlBlock(file, heading);

  it('passes aqven check inside a project’s simulate: block', async () => {
    const dir = await writeProject({ 'aqven.yaml': aqvenYaml(example) });
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(
      diagnostics.filter((d) => d.severity === 'error'),
      JSON.stringify(diagnostics, null, 2),
    ).toEqual([]);
    const scenario = parseScenario(example, 'scenario.yaml');
    expect(project!.simulate.scripts).toEqual(scenario.scripts);
    expect(project!.simulate.chaos).toEqual(scenario.chaos ?? {});
    // a scenario's chaos.seed is the project's seed when simulate.seed is absent
    expect(project!.simulate.seed).toBe(scenario.chaos?.seed ?? 0);
  });

  it('is accepted as a scenario file', () => {
    const scenario = parseScenario(example, 'scenario.yaml');
    expect(Object.keys(scenario.scripts ?? {}).length).toBeGreaterThan(0);
  });
});

describe('simulate: errors', () => {
  it('an unknown step kind is E_FIELD at its value, with its field path', async () => {
    const text = aqvenYaml('scripts:\n  "a/b":\n    - { kind: ok, finish_reason: tool_calls }\n    - { kind: boom }\n');
    const { diagnostics } = await loadProject(await writeProject({ 'aqven.yaml': text }), { env: KEY });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ file: 'aqven.yaml', code: 'E_FIELD', path: ['simulate', 'scripts', 'a/b', 1, 'kind'], ...positionOf(text, 'boom') });
    expect(diagnostics[0].message).toContain('"stream_error"');
  });

  it('two different seeds are ambiguous', async () => {
    const text = aqvenYaml('seed: 3\nchaos: { seed: 7, drop: 0.1 }\n');
    const { diagnostics } = await loadProject(await writeProject({ 'aqven.yaml': text }), { env: KEY });
    expect(diagnostics).toMatchObject([{ code: 'E_FIELD', path: ['simulate', 'chaos', 'seed'], ...positionOf(text, '7') }]);
  });

  it('probabilities above 1 in total are reported once, at chaos', async () => {
    const text = aqvenYaml('chaos: { drop: 0.6, invalid: 0.6 }\n');
    const { diagnostics } = await loadProject(await writeProject({ 'aqven.yaml': text }), { env: KEY });
    expect(diagnostics).toMatchObject([{ code: 'E_FIELD', path: ['simulate', 'chaos'], message: expect.stringContaining('add up to 1.2') }]);
  });
});
