import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration';
import { expandEnv } from './env';
import { parseModelString } from '../engine/model-string';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['2s', 2000],
    ['1.5s', 1500],
    ['1m', 60_000],
    ['120s', 120_000],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['2', '2 s', '-1s', '1.s', 's', '1d', ''])('rejects %j', (text) => expect(parseDuration(text)).toBeNull());
});

describe('parseModelString', () => {
  it('splits at the first colon', () => {
    expect(parseModelString('openrouter:openai/gpt-oss-20b')).toEqual({ provider: 'openrouter', modelId: 'openai/gpt-oss-20b' });
    expect(parseModelString('openrouter:meta-llama/llama-3-8b:free')).toEqual({ provider: 'openrouter', modelId: 'meta-llama/llama-3-8b:free' });
  });

  it.each(['gpt-4o', ':gpt-4o', 'openai:', 'open ai:gpt', ''])('rejects %j', (text) => expect(parseModelString(text)).toBeNull());
});

describe('expandEnv', () => {
  const env = { HOST: 'localhost', EMPTY: '' };
  it('expands ${VAR} and ${VAR:-default}', () => {
    expect(expandEnv('http://${HOST}:${PORT:-8080}', env)).toEqual({ value: 'http://localhost:8080', missing: [] });
    expect(expandEnv('${EMPTY:-x}', env)).toEqual({ value: 'x', missing: [] });
  });
  it('reports a variable that is unset and has no default', () => {
    expect(expandEnv('a${NOPE}b', env)).toEqual({ value: 'ab', missing: ['NOPE'] });
  });
  it('keeps $${ as a literal ${', () => {
    expect(expandEnv('$${HOST}', env)).toEqual({ value: '${HOST}', missing: [] });
  });
});
