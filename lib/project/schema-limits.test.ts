import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { positionOf, writeProject } from '@/test/helpers/fixture-project';
import { loadProject } from './index';
import { exceeds, schemaLimitDiagnostics, type MeasuredLimit } from './schema-limits';

const PRIMARY = 'openrouter:google/gemini-2.5-flash-lite';
const FALLBACK = 'openrouter:openai/gpt-oss-20b';

const AGENT = `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "${PRIMARY}"\nfallback_models:\n- "${FALLBACK}"\noutput:\n  retries: 2\n`;

/** A flow with a node `deep` (4 nested objects, a 12-value enum, a list of at least 50) and a node `small` (1 level, 3 values). */
const FLOW = `apiVersion: "aqven/v1"
kind: "Flow"
input:
  type: object
  properties: { question: { type: string } }
nodes:
  deep:
    agent: "helper"
    prompt: "Answer: {{ input.question }}"
    output:
      type: object
      properties:
        a:
          type: object
          properties:
            b:
              type: object
              properties:
                c:
                  type: object
                  properties:
                    pick: { enum: [v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12] }
        items:
          type: array
          minItems: 50
          items: { type: string }
  small:
    agent: "helper"
    prompt: "Answer: {{ input.question }}"
    output:
      type: object
      properties:
        queue: { enum: [billing, tech, sales] }
`;

const limit = (
  model: string,
  dimension: MeasuredLimit['dimension'],
  lastHeld: number | null,
  firstFailed: number | null,
  status: MeasuredLimit['status'] = 'complete',
): MeasuredLimit => ({
  model,
  dimension,
  status,
  lastHeld,
  firstFailed,
  measuredOn: '2026-11-30',
});

async function diagnose(limits: MeasuredLimit[]) {
  const dir = await writeProject({ 'agents/helper.yaml': AGENT, 'flows/ask.yaml': FLOW });
  const { project } = await loadProject(dir, { env: { OPENROUTER_API_KEY: 'sk-test' } });
  const read = (file: string) => readFile(join(dir, file), 'utf8');
  return schemaLimitDiagnostics(project!, limits, read);
}

describe('W_SCHEMA_LIMIT', () => {
  it('warns at the first level past what the model held, with the figure and the date', async () => {
    const [d, ...rest] = await diagnose([limit(PRIMARY, 'depth', 2, 3)]);
    expect(rest).toEqual([]);
    // level 3 is the object under "b"
    expect(d).toMatchObject({ file: 'flows/ask.yaml', severity: 'warning', code: 'W_SCHEMA_LIMIT', ...positionOf(FLOW, 'b:') });
    expect(d.path).toEqual(['nodes', 'deep', 'output', 'properties', 'a', 'properties', 'b']);
    expect(d.message).toBe(`the output schema of node "deep" nests 4 levels deep; model "${PRIMARY}" held depth 2 and failed at 3 (measured 2026-11-30)`);
    expect(d.hint).toBe(
      'split node "deep" into nodes that each ask for less, raise output.retries in agents/helper.yaml (now 2), or set output.strict: true (provider "openrouter" constrains the answer to the schema)',
    );
  });

  it('is silent for a node that fits, and for a model with no measurement', async () => {
    expect(await diagnose([limit(PRIMARY, 'depth', 4, 5), limit(PRIMARY, 'enum', 30, 36), limit(PRIMARY, 'list', 50, 60)])).toEqual([]);
    expect(await diagnose([limit('openrouter:other/model', 'depth', 1, 2)])).toEqual([]);
    expect(await diagnose([])).toEqual([]);
  });

  it('points a list at its minItems and an enum at its values, node by node', async () => {
    const ds = await diagnose([limit(PRIMARY, 'list', 40, 48), limit(PRIMARY, 'enum', 2, 4)]);
    expect(ds.map((d) => [d.path.slice(1, 2)[0], d.path.at(-1), d.line, d.col])).toEqual([
      ['deep', 'enum', positionOf(FLOW, 'enum').line, positionOf(FLOW, 'enum').col],
      ['deep', 'minItems', positionOf(FLOW, 'minItems').line, positionOf(FLOW, 'minItems').col],
      ['small', 'enum', positionOf(FLOW, 'enum', 'small:').line, positionOf(FLOW, 'enum', 'small:').col],
    ]);
    expect(ds[1].message).toContain('asks for a list of at least 50 items (minItems); model');
    expect(ds[1].message).toContain('held lists of 40 and failed at 48');
    expect(ds[2].message).toContain('offers 3 values in one enum');
  });

  it('names a fallback model that falls short, in the same warning', async () => {
    const ds = await diagnose([limit(PRIMARY, 'depth', 6, 7), limit(FALLBACK, 'depth', 3, 4)]);
    expect(ds).toHaveLength(1);
    expect(ds[0].message).toContain(`fallback model "${FALLBACK}" held depth 3 and failed at 4`);
    expect(ds[0].message).not.toContain(PRIMARY);
    // the first level past 3: the object under "c"
    expect(ds[0].path.at(-1)).toBe('c');
  });
});

describe('exceeds', () => {
  it('at or past a level that failed, or past the last level held of a finished search', () => {
    expect(exceeds(6, limit(PRIMARY, 'depth', 5, 6))).toBe(true);
    expect(exceeds(5, limit(PRIMARY, 'depth', 5, 6))).toBe(false);
    // a search stopped by its budget between 8 (held) and 16 (failed) knows nothing of 12
    expect(exceeds(12, limit(PRIMARY, 'depth', 8, 16, 'partial'))).toBe(false);
    expect(exceeds(16, limit(PRIMARY, 'depth', 8, 16, 'partial'))).toBe(true);
    // never failed within the search: no limit was found
    expect(exceeds(70, limit(PRIMARY, 'depth', 64, null))).toBe(false);
    // failed at the first level tried
    expect(exceeds(2, limit(PRIMARY, 'depth', null, 2))).toBe(true);
    expect(exceeds(1, limit(PRIMARY, 'depth', null, 2))).toBe(false);
  });
});
