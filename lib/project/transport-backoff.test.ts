// providers/NAME.yaml `transport.backoff` (DESIGN: Transport retry and rate limits): the wait before
// re-trying a 5xx, a dropped connection or a timeout, a setting of its own beside on_rate_limit.
import { describe, expect, it } from 'vitest';
import { positionOf, writeProject } from '@/test/helpers/fixture-project';
import { checkProject, loadProject, type Diagnostic } from './index';

const KEY = { OPENROUTER_API_KEY: 'sk-test' };
const provider = (body: string) => `apiVersion: "aqven/v1"\nkind: "Provider"\n${body}`;
const errorsOf = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'error');

async function load(body: string) {
  return loadProject(await writeProject({ 'providers/openrouter.yaml': provider(body) }), { env: KEY });
}

describe('transport.backoff', () => {
  it('defaults to 0.5 s, doubling, at most 8 s, up to 25% off, for built-in providers and files alike', async () => {
    const { project } = await load('max_concurrency: 4\n');
    expect(project!.providers.openrouter!.transport.backoff).toEqual({ baseMs: 500, factor: 2, capMs: 8000, jitter: 0.25 });
    expect(project!.providers.openai!.transport.backoff).toEqual({ baseMs: 500, factor: 2, capMs: 8000, jitter: 0.25 });
    // on_rate_limit keeps its own default_wait, for 429s
    expect(project!.providers.openrouter!.onRateLimit.defaultWaitMs).toBe(1000);
  });

  it('is written with durations as the other settings are; a part left out keeps its default', async () => {
    const { project, diagnostics } = await load('transport:\n  backoff: { base: "250ms", cap: "1m", jitter: 1 }\n');
    expect(errorsOf(diagnostics)).toEqual([]);
    expect(project!.providers.openrouter!.transport.backoff).toEqual({ baseMs: 250, factor: 2, capMs: 60_000, jitter: 1 });
  });

  it.each([
    ['a factor below 1', '  backoff: { factor: 0.5 }\n', '0.5', 'transport.backoff.factor must be at least 1'],
    ['a factor above 10', '  backoff: { factor: 11 }\n', '11', 'transport.backoff.factor must be at most 10'],
    ['a jitter above 1', '  backoff: { jitter: 2 }\n', '2 }', 'transport.backoff.jitter must be at most 1'],
    ['a jitter in words', '  backoff: { jitter: full }\n', 'full', 'transport.backoff.jitter must be a number, not the string "full"'],
    ['a base without its unit', '  backoff: { base: 500 }\n', '500', 'transport.backoff.base must be a string, not number 500'],
    ['a base that is no duration', '  backoff: { base: "half a second" }\n', '"half', '"half a second" is not a duration'],
    ['a cap past an hour', '  backoff: { cap: "2h" }\n', '"2h"', '"2h" is longer than 1h, the longest allowed here'],
    ['a cap shorter than base', '  backoff: { base: "2s", cap: "1s" }\n', '"1s"', 'cap (1s) is shorter than base (2s): no backoff could be as long as the first'],
    ['an unknown key', '  backoff: { initial: "1s" }\n', 'initial', 'unknown key "initial"'],
  ])('%s is a positioned error that says what is wrong', async (_what, line, needle, message) => {
    const text = provider(`transport:\n${line}`);
    const ds = errorsOf(await checkProject(await writeProject({ 'providers/openrouter.yaml': text }), { env: KEY }));
    expect(ds, JSON.stringify(ds, null, 1)).toHaveLength(1);
    expect(ds[0]).toMatchObject({ file: 'providers/openrouter.yaml', code: 'E_FIELD', ...positionOf(text, needle, 'backoff') });
    expect(ds[0]!.message).toContain(message);
  });
});
