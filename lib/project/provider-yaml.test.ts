// One provider file on its own (provider-yaml.ts) and the cross-file checks fed by it (project-checks.ts):
// a provider not built in needs api and base_url; a file's api_key_env is where W_API_KEY points.
import { describe, expect, it } from 'vitest';
import { apiKeyWarnings, type ProviderUse } from './project-checks';
import { parseProviderYaml, providerFromSource } from './provider-yaml';

const head = 'apiVersion: "aqven/v1"\nkind: "Provider"\n';
const local = `${head}api: openai\nbase_url: http://127.0.0.1:9/v1/\napi_key_env: LOCAL_API_KEY\nmodels:\n  m: {}\n`;

describe('providerFromSource', () => {
  it('resolves a provider file over no built-in base, the trailing slash of base_url dropped', () => {
    const { provider, diagnostics, src } = providerFromSource(local, 'providers/local.yaml', { env: {} });
    expect(diagnostics).toEqual([]);
    expect(provider).toMatchObject({ name: 'local', api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'LOCAL_API_KEY' });
    expect(src.file).toBe('providers/local.yaml');
  });

  it('refuses a provider that is not built in and names no api or base_url', () => {
    const { provider, diagnostics } = parseProviderYaml(`${head}models: {}\n`, 'providers/local.yaml', { env: {} });
    expect(provider).toBeNull();
    expect(diagnostics.map((d) => d.message)).toEqual([
      'missing required key "api" (the provider "local" is not built in)',
      'missing required key "base_url" (the provider "local" is not built in)',
    ]);
  });
});

describe('apiKeyWarnings', () => {
  it('points at the api_key_env of the provider file when its key is not set, and says nothing once it is', () => {
    const { provider, src } = providerFromSource(local, 'providers/local.yaml', { env: {} });
    const loaded = { providers: { local: provider! }, broken: new Set<string>(), sources: new Map([['local', src]]), diagnostics: [] };
    const used: ProviderUse = new Map([['local', { src, path: ['models'], agents: ['writer'] }]]);
    const [w] = apiKeyWarnings(used, loaded, {});
    expect(w).toMatchObject({ code: 'W_API_KEY', file: 'providers/local.yaml', line: 5 });
    expect(w!.message).toContain('provider "local" (used by agents/writer)');
    expect(apiKeyWarnings(used, loaded, { LOCAL_API_KEY: 'k' })).toEqual([]);
  });
});
