// Hostile and broken project files (DESIGN: Limits): each is answered with positioned
// diagnostics — never an exception, never a hang, never 100,000 lines of output — and the small
// gaps (durations, credentials in URLs, unprintable model ids, hex integers, names that are
// members of Object.prototype) are closed.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { positionOf, writeProject } from '@/test/helpers/fixture-project';
import { own } from '../shared/own';
import { flowDiagnostics } from './check-flows';
import { AgentYamlError, checkProject, loadProject, LIMITS, updateAgentYaml, type Diagnostic } from './index';
import type { FlowFile } from './schema';
import { YamlSource } from './yaml-source';

const KEY = { OPENROUTER_API_KEY: 'sk-test' };
const agent = (body: string) => `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b"\n${body}`;
const provider = (body: string) => `apiVersion: "aqven/v1"\nkind: "Provider"\n${body}`;
const flow = (nodes: string) => `apiVersion: "aqven/v1"\nkind: "Flow"\ninput:\n  type: object\n  properties: { q: { type: string } }\nnodes:\n${nodes}`;

async function check(files: Record<string, string | Buffer | null>): Promise<Diagnostic[]> {
  const text = Object.fromEntries(Object.entries(files).map(([f, t]) => [f, Buffer.isBuffer(t) ? '' : t]));
  const dir = await writeProject(text);
  for (const [f, t] of Object.entries(files)) if (Buffer.isBuffer(t)) await writeFile(join(dir, f), t);
  return checkProject(dir, { env: KEY });
}

const errorsOf = (ds: Diagnostic[]) => ds.filter((d) => d.severity === 'error');

/** Exactly one error, with this code, at the first occurrence of `needle` (after `after`). */
function expectOne(ds: Diagnostic[], file: string, text: string, code: string, needle: string, after?: string): Diagnostic {
  const errors = errorsOf(ds);
  expect(errors, JSON.stringify(ds, null, 1)).toHaveLength(1);
  expect(errors[0]).toMatchObject({ file, code, ...positionOf(text, needle, after) });
  return errors[0];
}

describe('aqven check on hostile YAML', () => {
  it('an unresolved alias is an error at the alias', async () => {
    const text = agent('description: *nope\n');
    const d = expectOne(await check({ 'agents/helper.yaml': text }), 'agents/helper.yaml', text, 'E_FIELD', '*nope');
    expect(d.message).toBe('alias *nope refers to no anchor: &nope must be set before it');
    expect(d.path).toEqual(['description']);
  });

  it('anchors and a few aliases still work', async () => {
    // (the same model twice in the chain is E_CHAIN_DUPLICATE, so the aliases repeat other values)
    const text =
      'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: &m "openrouter:a/b"\nsystem: *m\nfallback_models: [&f "openrouter:c/d"]\ndescription: *f\noutput: &o { retries: 2 }\n';
    const { project, diagnostics } = await loadProject(await writeProject({ 'agents/helper.yaml': text }), { env: KEY });
    expect(diagnostics).toEqual([]);
    expect(project!.agents.helper.fallbackModels).toEqual(['openrouter:c/d']);
    expect(project!.agents.helper.system).toBe('openrouter:a/b');
  });

  it(`more than ${LIMITS.aliases} aliases are E_LIMIT at the first one too many`, async () => {
    const text = agent(`description: &d "x"\nsystem: [${Array.from({ length: 150 }, () => '*d').join(', ')}]\n`);
    const ds = await check({ 'agents/helper.yaml': text });
    const limit = errorsOf(ds).filter((d) => d.code === 'E_LIMIT');
    expect(limit).toHaveLength(1);
    expect(limit[0].message).toBe(`more than ${LIMITS.aliases} aliases (*name) in one file`);
    const col = 'system: ['.length + 1 + 4 * LIMITS.aliases; // the 101st "*d"
    expect(limit[0]).toMatchObject({ file: 'agents/helper.yaml', line: 5, col });
  });

  it('a billion-laughs bomb is E_LIMIT, not an exception or a hang', async () => {
    let text = agent('settings:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n');
    for (let i = 1; i < 10; i++)
      text += `  a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(', ')}]\n`;
    const ds = await check({ 'agents/helper.yaml': text });
    expect(errorsOf(ds).map((d) => [d.code, d.message])).toEqual([['E_LIMIT', `the aliases of this file stand for more than ${LIMITS.aliasValues} values`]]);
    expect(errorsOf(ds)[0].line).toBeGreaterThan(4);
  });

  it('an alias inside the value it names is an error, not a circular value', async () => {
    const text = agent('settings:\n  stop: &s [a, *s]\n');
    const d = expectOne(await check({ 'agents/helper.yaml': text }), 'agents/helper.yaml', text, 'E_FIELD', '*s');
    expect(d.message).toBe('alias *s is inside the value it refers to');
  });

  it('nesting 10,000 deep is E_LIMIT at its position', async () => {
    const text = agent(`settings:\n  x: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`);
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds.length).toBeGreaterThanOrEqual(1);
    for (const d of ds) expect(d).toMatchObject({ file: 'agents/helper.yaml', code: 'E_LIMIT', line: 5 });
  });

  it(`nesting ${LIMITS.depth} levels is fine, one more is E_LIMIT at the first level too deep`, async () => {
    // the file's mapping is level 1, settings 2, x 3: n brackets reach level n + 2
    const ok = agent(`settings:\n  x: ${'['.repeat(LIMITS.depth - 2)}${']'.repeat(LIMITS.depth - 2)}\n`);
    expect(await check({ 'agents/helper.yaml': ok })).toEqual([]);
    const deep = agent(`settings:\n  x: ${'['.repeat(LIMITS.depth - 1)}${']'.repeat(LIMITS.depth - 1)}\n`);
    const d = expectOne(await check({ 'agents/helper.yaml': deep }), 'agents/helper.yaml', deep, 'E_LIMIT', '[]');
    expect(d.message).toBe(`the values here are nested more than ${LIMITS.depth} levels deep (mappings and lists inside each other)`);
  });

  it(`a file over ${LIMITS.fileBytes / 1024} KiB is E_LIMIT at its start, not parsed`, async () => {
    const text = agent(`settings:\n${Array.from({ length: 30_000 }, (_, i) => `  k${i}: 1\n`).join('')}`);
    const ds = await check({ 'agents/helper.yaml': text });
    expect(errorsOf(ds)).toEqual([
      expect.objectContaining({
        file: 'agents/helper.yaml',
        line: 1,
        col: 1,
        code: 'E_LIMIT',
        message: expect.stringMatching(/^the file is [\d.]+ KiB; a project file may be at most 128 KiB$/),
      }),
    ]);
  });

  it('20,000 duplicate keys: the first 100 listed at their keys, the rest counted in one E_MORE', async () => {
    const text = agent(`settings: {${Array.from({ length: 20_001 }, () => 'k: 1').join(',')}}\n`);
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds).toHaveLength(LIMITS.diagnosticsPerFile + 1);
    expect(ds[0]).toMatchObject({ code: 'E_FIELD', line: 4, col: 'settings: {k: 1,'.length + 1, message: 'duplicate key "k" (first at line 4)', path: ['settings', 'k'] });
    expect(ds[ds.length - 1]).toMatchObject({ code: 'E_MORE', line: 1, col: 1, path: [], omitted: 20_000 - LIMITS.diagnosticsPerFile });
  });

  it('60,000 unclosed "{{" in a prompt: 100 diagnostics and "and 59900 more"', async () => {
    const text = flow(`  n:\n    agent: "helper"\n    prompt: "${'{{'.repeat(60_000)}"\n`);
    const ds = errorsOf(await check({ 'flows/ask.yaml': text }));
    expect(ds).toHaveLength(LIMITS.diagnosticsPerFile + 1);
    expect(ds[0]).toMatchObject({ code: 'E_TEMPLATE', message: '"{{" is never closed with "}}"', ...positionOf(text, '{{') });
    expect(ds[ds.length - 1]).toMatchObject({ code: 'E_MORE', omitted: 60_000 - LIMITS.diagnosticsPerFile, message: 'and 59900 more errors in this file, not listed' });
    expect(JSON.stringify(ds).length).toBeLessThan(100_000);
  });

  it(`a needs cycle through all ${LIMITS.flowNodes} nodes is one diagnostic with a short message`, async () => {
    const n = LIMITS.flowNodes;
    const text = flow(Array.from({ length: n }, (_, i) => `  n${i}: { agent: "helper", prompt: "p", needs: [n${(i + 1) % n}] }\n`).join(''));
    const ds = errorsOf(await check({ 'flows/ask.yaml': text }));
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ code: 'E_FLOW_NEEDS', path: ['nodes', `n${n - 1}`, 'needs', 0], ...positionOf(text, 'n0', `n${n - 1}:`) });
    expect(ds[0].message).toMatch(/^nodes form a cycle: n0 needs n1, .*, n9 needs n10, … \(490 more\)$/);
  });

  it(`more than ${LIMITS.flowNodes} nodes is E_LIMIT at nodes:`, async () => {
    const text = flow(Array.from({ length: 2_000 }, (_, i) => `  n${i}: {agent: helper, prompt: p, needs: [n${i + 1}]}\n`).join(''));
    const d = expectOne(await check({ 'flows/ask.yaml': text }), 'flows/ask.yaml', text, 'E_LIMIT', 'nodes:');
    expect(d.message).toBe(`the flow has 2000 nodes; a flow may have at most ${LIMITS.flowNodes}`);
  });

  it('the flow checks walk 10,000 nodes without recursion (cycles of needs and of on_fail, a chain)', () => {
    const src = new YamlSource('flows/big.yaml', 'nodes: {}\n');
    const n = 10_000;
    const nodes = (f: (i: number) => Partial<FlowFile['nodes'][string]>) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`n${i}`, { agent: 'a', prompt: 'p', needs: [], stream: false, ...f(i) }]));
    const run = (data: Pick<FlowFile, 'nodes'>) => flowDiagnostics(src, { apiVersion: 'aqven/v1', kind: 'Flow', input: { type: 'object' }, ...data } as FlowFile, {});
    const needsCycle = run({ nodes: nodes((i) => ({ needs: [`n${(i + 1) % n}`] })) });
    expect(needsCycle.map((d) => d.code)).toEqual(['E_FLOW_NEEDS']);
    expect(needsCycle[0].message).toContain(`(${n - 10} more)`);
    const onFailCycle = run({ nodes: nodes((i) => ({ on_fail: `n${(i + 1) % n}` })) });
    expect(onFailCycle.map((d) => d.code)).toEqual(['E_FLOW_NEEDS']);
    expect(run({ nodes: nodes((i) => (i ? { needs: [`n${i - 1}`] } : {})) })).toEqual([]);
    // every node routes to one that needs it: 10,000 errors, 100 of them listed
    const routed = run({ nodes: nodes((i) => ({ needs: i ? [`n${i - 1}`] : [], ...(i < n - 1 && { on_fail: `n${i + 1}` }) })) });
    expect(routed).toHaveLength(LIMITS.diagnosticsPerFile + 1);
    expect(routed[routed.length - 1]).toMatchObject({ code: 'E_MORE', omitted: expect.any(Number) });
  });

  it('a byte that is not UTF-8 is an error at its line and column', async () => {
    const bytes = Buffer.concat([Buffer.from(agent('description: "caf')), Buffer.from([0xe9]), Buffer.from('"\n')]);
    const ds = errorsOf(await check({ 'agents/helper.yaml': bytes }));
    expect(ds).toEqual([
      expect.objectContaining({
        file: 'agents/helper.yaml',
        line: 4,
        col: 'description: "caf'.length + 1,
        code: 'E_FIELD',
        message: expect.stringContaining('not UTF-8: byte 0xE9'),
      }),
    ]);
  });

  it('tabs as indentation are a positioned syntax error', async () => {
    const text = agent('output:\n\tretries: 2\n');
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds.length).toBeGreaterThan(0);
    expect(ds[0]).toMatchObject({ code: 'E_FIELD', line: 5, message: expect.stringContaining('YAML syntax error') });
  });

  it('duplicate keys name the line of the first', async () => {
    const text = agent('output:\n  retries: 1\n  retries: 2\n');
    const d = expectOne(await check({ 'agents/helper.yaml': text }), 'agents/helper.yaml', text, 'E_FIELD', 'retries: 2');
    expect(d).toMatchObject({ line: 6, message: 'duplicate key "retries" (first at line 5)', path: ['output', 'retries'] });
  });

  it('a key "__proto__" is refused where it would otherwise vanish (a node id, a catalogue model)', async () => {
    const text = flow('  answer:\n    agent: "helper"\n    prompt: "p"\n  __proto__:\n    agent: "helper"\n    prompt: "p"\n');
    const d = expectOne(await check({ 'flows/ask.yaml': text }), 'flows/ask.yaml', text, 'E_FIELD', '__proto__');
    expect(d.message).toBe('the key "__proto__" is not allowed');
    const p = provider('models:\n  __proto__: { structured_outputs: false }\n');
    expectOne(await check({ 'providers/openrouter.yaml': p }), 'providers/openrouter.yaml', p, 'E_FIELD', '__proto__');
  });

  it('unprintable text in a message is escaped (a key with ESC and a bidi override)', async () => {
    const text = agent('output:\n  "re\\u001b[31mtries\\u202e": 2\n');
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds).toHaveLength(1);
    expect(ds[0].message).toBe('unknown key "re\\u{001B}[31mtries\\u{202E}" in output');
  });
});

describe('the policy form on a hostile agent file', () => {
  it.each([
    ['an unresolved alias', agent('description: *nope\n'), 'alias *nope refers to no anchor'],
    ['an alias inside its own value', agent('settings:\n  stop: &s [a, *s]\n'), 'is inside the value it refers to'],
    [
      'a billion-laughs bomb',
      agent(
        `settings:\n  a0: &a0 [l, l, l, l, l, l, l, l, l]\n${Array.from({ length: 9 }, (_, i) => `  a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(', ')}]\n`).join('')}`,
      ),
      'stand for more than',
    ],
    ['nesting 10,000 deep', agent(`settings:\n  x: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`), 'nested too deeply'],
  ])('%s is refused with AgentYamlError, not thrown through', (_what, text, message) => {
    expect(() => updateAgentYaml(text, { output: { retries: 2 } })).toThrow(AgentYamlError);
    expect(() => updateAgentYaml(text, { output: { retries: 2 } })).toThrow(message);
  });

  it('a file with a few aliases is still edited', () => {
    const text = agent('fallback_models: &f ["openrouter:c/d"]\nsettings:\n  stop: *f\n');
    expect(updateAgentYaml(text, { output: { retries: 2 } })).toBe(`${text}output:\n  retries: 2\n`);
  });
});

describe('aqven check closes small gaps', () => {
  it.each([
    ['transport.timeout', 'transport:\n  timeout: "600h"\n', '"600h"', '"600h" is longer than 24h, the longest allowed here', 'use a duration of at most 24h'],
    ['transport.budget', 'transport:\n  budget: "1441m"\n', '"1441m"', '"1441m" is longer than 24h, the longest allowed here', 'use a duration of at most 24h'],
    ['on_rate_limit.max_wait', 'on_rate_limit:\n  max_wait: "2h"\n', '"2h"', '"2h" is longer than 1h, the longest allowed here', 'use a duration of at most 1h'],
    ['on_rate_limit.default_wait', 'on_rate_limit:\n  default_wait: "99999999999999999999999h"\n', '"9999', 'is longer than 1h', 'use a duration of at most 1h'],
  ])('%s past its maximum is a positioned error that states the maximum', async (_field, body, needle, message, hint) => {
    const text = provider(body);
    const d = expectOne(await check({ 'providers/openrouter.yaml': text }), 'providers/openrouter.yaml', text, 'E_FIELD', needle);
    expect(d.message).toContain(message);
    expect(d.hint).toBe(hint);
  });

  it('the simulated latency of aqven.yaml is bounded too', async () => {
    const text = 'apiVersion: "aqven/v1"\nkind: "Project"\nsimulate:\n  latency: { first_token_ms: 1e12, tokens_per_s: 0.001 }\n';
    const ds = errorsOf(await check({ 'aqven.yaml': text }));
    expect(ds.map((d) => [d.path, d.message, d.line])).toEqual([
      [['simulate', 'latency', 'first_token_ms'], 'simulate.latency.first_token_ms must be at most 600000', 4],
      [['simulate', 'latency', 'tokens_per_s'], 'tokens_per_s must be 0 (no pacing) or at least 1', 4],
    ]);
  });

  it('durations at their maximum pass', async () => {
    const text = provider('transport:\n  timeout: "24h"\n  budget: "24h"\non_rate_limit:\n  default_wait: "1h"\n  max_wait: "60m"\n');
    expect(errorsOf(await check({ 'providers/openrouter.yaml': text }))).toEqual([]);
  });

  it('credentials in base_url are refused without repeating them', async () => {
    const text = provider('api: "openai"\nbase_url: "http://user:s3cret@llm.internal:8080/v1"\n');
    const d = expectOne(await check({ 'providers/local.yaml': text }), 'providers/local.yaml', text, 'E_FIELD', '"http://');
    expect(d.message).toBe('base_url must not contain credentials ("user:password@" before the host llm.internal:8080)');
    expect(d.hint).toContain('api_key_env');
    expect(JSON.stringify(d)).not.toContain('s3cret');
    const token = provider('api: "openai"\nbase_url: "https://sk-abc123@llm.internal/v1"\n');
    expect(errorsOf(await check({ 'providers/local.yaml': token })).map((x) => x.message)).toEqual([expect.stringContaining('must not contain credentials')]);
  });

  it.each([
    ['NUL', '\\0', 'U+0000'],
    ['a C1 control', '\\u0085', 'U+0085'],
    ['a bidi override', '\\u202E', 'U+202E'],
    ['a zero-width space', '\\u200B', 'U+200B'],
  ])('a model id with %s is E_MODEL, shown escaped', async (_what, escape, code) => {
    const text = `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:gpt${escape}4o"\n`;
    const d = expectOne(await check({ 'agents/helper.yaml': text }), 'agents/helper.yaml', text, 'E_MODEL', '"openrouter');
    expect(d.message).toBe(`model "openrouter:gpt\\u{${code.slice(2)}}4o" contains the unprintable character ${code}: model strings are printable characters only`);
  });

  it.each([
    ['a path that leaves models/', 'google:x/../../../v1beta/cachedContents', 'has a "." or ".." path segment'],
    ['a query', 'google:gemini-2.5-flash?key=1', 'contains the character "?"'],
    ['a fragment', 'openrouter:a/b#c', 'contains the character "#"'],
    ['a percent escape', 'google:x%2F..%2Fy', 'contains the character "%"'],
    ['a backslash', 'google:x\\\\y', 'contains the character "\\\\"'],
    ['a non-ASCII letter', 'google:gemini-ß', 'contains the character "ß"'],
    ['an empty segment', 'openrouter:openai//gpt', 'has an empty path segment ("/" at its start or end, or "//")'],
  ])("a model id with %s is E_MODEL at the agent's model field", async (_what, model, problem) => {
    const text = `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "${model}"\n`;
    const d = expectOne(await check({ 'agents/helper.yaml': text }), 'agents/helper.yaml', text, 'E_MODEL', '"', 'model:');
    expect(d.path).toEqual(['model']);
    expect(d.message).toBe(
      `model "${model.replace(/\\\\/g, '\\')}": its model id ${problem}; a model id may contain only letters A-Z a-z, digits and . _ - : / @ ~, with no empty, "." or ".." segment`,
    );
  });

  it.each([
    ['0x3', 'write 3'],
    ['0o3', 'write 3'],
    ['03', 'write 3 (no leading zero)'],
    ['-0x3', null],
  ])('retries: %s is not read as an integer', async (literal, hint) => {
    const text = agent(`output:\n  retries: ${literal}\n`);
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds).toHaveLength(1);
    expect(ds[0]).toMatchObject({ code: 'E_FIELD', path: ['output', 'retries'], ...positionOf(text, literal, 'retries') });
    if (hint) expect(ds[0]).toMatchObject({ message: `${literal} is not a decimal number: write integers in decimal`, hint });
    else expect(ds[0].message).toBe('output.retries must be a number, not the string "-0x3"');
  });

  it('a YAML 1.1 document is still read with YAML 1.2 core rules (no octal 010, no sexagesimal 1:30)', async () => {
    const text = `%YAML 1.1\n---\n${agent('output:\n  retries: 010\nsettings:\n  max_tokens: 1:30\n')}`;
    const ds = errorsOf(await check({ 'agents/helper.yaml': text }));
    expect(ds.map((d) => [d.code, d.path])).toEqual([['E_FIELD', ['output', 'retries']]]);
    // fixed, 1:30 is the string it is in YAML 1.2: the schema says so
    const fixed = errorsOf(await check({ 'agents/helper.yaml': text.replace('010', '10') }));
    expect(fixed.map((d) => [d.path, d.message])).toEqual([[['settings', 'max_tokens'], 'settings.max_tokens must be a number, not the string "1:30"']]);
  });

  it('.inf and .nan are refused', async () => {
    const text = agent('settings:\n  temperature: .nan\n  seed: .inf\n');
    expect(errorsOf(await check({ 'agents/helper.yaml': text })).map((d) => d.message)).toEqual(['.nan is not a finite number', '.inf is not a finite number']);
  });
});

describe('names that are members of Object.prototype', () => {
  it('an agent "constructor" and a flow "toString" with a node "constructor" load like any other', async () => {
    const dir = await writeProject({
      'agents/constructor.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:constructor"\n',
      'flows/toString.yaml': flow(
        '  constructor:\n    agent: "constructor"\n    prompt: "{{ input.q }}"\n  hasOwnProperty:\n    agent: "constructor"\n    needs: [constructor]\n    prompt: "{{ nodes.constructor.output }}"\n',
      ),
    });
    const { project, diagnostics } = await loadProject(dir, { env: KEY });
    expect(diagnostics).toEqual([]);
    expect(Object.hasOwn(project!.agents, 'constructor')).toBe(true);
    expect(own(project!.agents, 'constructor')!.model).toBe('openrouter:constructor');
    expect(Object.keys(own(project!.flows, 'toString')!.nodes)).toEqual(['constructor', 'hasOwnProperty']);
  });

  it('names that exist only on Object.prototype are unknown, not found', async () => {
    const text = flow('  answer:\n    agent: "toString"\n    prompt: "{{ nodes.constructor.output }}"\n    needs: [valueOf]\n    on_fail: "__proto__"\n');
    const ds = errorsOf(await check({ 'flows/ask.yaml': text }));
    expect(ds.map((d) => d.code).sort()).toEqual(['E_FLOW_AGENT', 'E_FLOW_NEEDS', 'E_FLOW_NEEDS', 'E_TEMPLATE']);
    const model = agent('fallback_models: ["constructor:gpt", "toString:x"]\n');
    expect(errorsOf(await check({ 'agents/helper.yaml': model })).map((d) => [d.code, d.path])).toEqual([
      ['E_PROVIDER', ['fallback_models', 0]],
      ['E_PROVIDER', ['fallback_models', 1]],
    ]);
  });

  it('${constructor} and api_key_env: "toString" are refused names, never Object.prototype members', async () => {
    const expand = provider('api: "openai"\nbase_url: "https://${constructor}x.example/v1"\n');
    expect(errorsOf(await checkProject(await writeProject({ 'providers/local.yaml': expand }), { env: process.env })).map((d) => [d.code, d.message])).toEqual([
      ['E_ENV_NAME', expect.stringContaining('base_url expands ${constructor}, a variable project files may not read')],
    ]);
    const key = provider('api: "openai"\nbase_url: "https://x.example/v1"\napi_key_env: "toString"\n');
    const dir = await writeProject({ 'providers/local.yaml': key, 'agents/helper.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "local:m"\n' });
    expect((await checkProject(dir, { env: process.env })).map((d) => [d.code, d.message])).toEqual([['E_ENV_NAME', expect.stringContaining('api_key_env names toString')]]);
  });

  it('an allowed name that only Object.prototype has is an unset variable', async () => {
    const expand = provider('api: "openai"\nbase_url: "https://${HAS_OWN_PROPERTY_HOST}x.example/v1"\n');
    const env = Object.create({ HAS_OWN_PROPERTY_HOST: 'inherited.example' }) as Record<string, string>;
    expect(errorsOf(await checkProject(await writeProject({ 'providers/local.yaml': expand }), { env })).map((d) => [d.code, d.message])).toEqual([
      ['E_FIELD', 'environment variable HAS_OWN_PROPERTY_HOST is not set and "${HAS_OWN_PROPERTY_HOST}" has no default'],
    ]);
  });

  it('a catalogue lookup of model id "constructor" reads only the catalogue', async () => {
    const text = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:constructor"\noutput:\n  strict: true\n';
    expect(errorsOf(await check({ 'agents/helper.yaml': text }))).toEqual([]);
    const p = provider('models:\n  constructor: { structured_outputs: false }\n');
    expect(errorsOf(await check({ 'agents/helper.yaml': text, 'providers/openrouter.yaml': p })).map((d) => d.code)).toEqual(['E_STRICT']);
  });
});
