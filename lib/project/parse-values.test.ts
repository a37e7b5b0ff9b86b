import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration';
import { envNameAllowed, expandEnv } from './env';
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

  it.each([
    'openrouter:google/gemini-2.5-flash-lite',
    'openrouter:meta-llama/llama-3-8b:free',
    'openrouter:openrouter/auto',
    'google:gemini-2.5-flash',
    'google:models/gemini-1.5-pro-002',
    'anthropic:claude-3-5-sonnet-20241022',
    'azure:my_gpt-4o.deployment',
    'bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0',
    'cloudflare:@cf/meta/llama-3-8b-instruct',
    'ollama:qwen2.5:7b-instruct-q4_K_M',
    'fireworks:accounts/fireworks/models/llama-v3-70b-instruct',
    'openrouter:~anthropic/claude-sonnet',
  ])('accepts the real model id %s', (model) => expect(parseModelString(model)).not.toBeNull());

  it.each([
    'google:x/../../../v1beta/cachedContents?',
    'google:..',
    'google:./x',
    'google:a?b',
    'google:a#b',
    'google:a%2Fb',
    'google:a\\b',
    'google:/a',
    'google:a/',
    'google:a//b',
    'google:gemini-ß',
    'google:a&b=c',
  ])('refuses the model id of %s, which a URL would read as structure', (model) => expect(parseModelString(model)).toBeNull());
});

describe('expandEnv', () => {
  const env = { LLM_HOST: 'localhost', EMPTY_HOST: '', AQVEN_AUTH_SECRET: 's3cret' };
  it('expands ${VAR} and ${VAR:-default}', () => {
    expect(expandEnv('http://${LLM_HOST}:${LLM_PORT:-8080}', env)).toEqual({ value: 'http://localhost:8080', missing: [], refused: [] });
    expect(expandEnv('${EMPTY_HOST:-x}', env)).toEqual({ value: 'x', missing: [], refused: [] });
  });
  it('reports a variable that is unset and has no default', () => {
    expect(expandEnv('a${NOPE_HOST}b', env)).toEqual({ value: 'ab', missing: ['NOPE_HOST'], refused: [] });
  });
  it('keeps $${ as a literal ${', () => {
    expect(expandEnv('$${LLM_HOST}', env)).toEqual({ value: '${LLM_HOST}', missing: [], refused: [] });
  });
  it('never reads a name outside the pattern, not even for its default', () => {
    expect(expandEnv('a${AQVEN_AUTH_SECRET}b${HOME:-/root}c${PGHOST}', env)).toEqual({ value: 'abc', missing: [], refused: ['AQVEN_AUTH_SECRET', 'HOME', 'PGHOST'] });
  });
});

describe('envNameAllowed', () => {
  it.each(['OPENAI_BASE_URL', 'OLLAMA_HOST', 'LLM_PORT', 'RUNS_DIR'])('expands %s', (name) => expect(envNameAllowed(name, 'expand')).toBe(true));
  it.each(['OPENAI_API_KEY', 'HOME', 'PATH', 'AQVEN_DATA_DIR', 'AQVEN_SIM_HOST', 'DATABASE_URL', 'PGHOST', 'PG_HOST', 'PGPORT', 'llm_host', '_HOST', 'HOST'])(
    'does not expand %s',
    (name) => expect(envNameAllowed(name, 'expand')).toBe(false),
  );
  it.each(['OPENROUTER_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'AZURE_OPENAI_API_KEY', 'CLOUDFLARE_API_TOKEN'])('reads %s as api_key_env', (name) =>
    expect(envNameAllowed(name, 'api_key_env')).toBe(true),
  );
  it.each([
    'AQVEN_DATABASE_URL',
    'AQVEN_AUTH_SECRET',
    'AQVEN_API_KEY',
    'DATABASE_URL',
    'PGPASSWORD',
    'PG_API_KEY',
    'AWS_SECRET_ACCESS_KEY',
    'OPENAI_BASE_URL',
    'openai_api_key',
    'API_KEY',
  ])('does not read %s as api_key_env', (name) => expect(envNameAllowed(name, 'api_key_env')).toBe(false));
  it.each(['SLACK_WEBHOOK_URL', 'ALERTS_WEBHOOK', 'ONCALL_WEBHOOK_URL'])('reads %s as alerts.webhook.url_env', (name) => expect(envNameAllowed(name, 'url_env')).toBe(true));
  // only names meant for a webhook: a pushed file makes a worker read no other variable of its environment, AQVEN's own least of all
  it.each(['AQVEN_ALERT_WEBHOOK', 'AQVEN_PUBLIC_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'WEBHOOK_URL', 'slack_webhook_url', 'PG_WEBHOOK'])(
    'does not read %s as alerts.webhook.url_env',
    (name) => expect(envNameAllowed(name, 'url_env')).toBe(false),
  );
});
