// Loads and checks an AQVEN project folder (DESIGN.md §3, §12): every file is parsed with its
// positions, validated against its zod schema, then checked across files (providers of model
// strings, agents of flow nodes, needs, templates, schemas). All problems are collected, so one
// `aqven check` shows them all.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, resolve } from 'node:path';
import type { z } from 'zod';
import type { ResolvedProvider } from '../engine/types';
import type { ScriptMap } from '../sim/types';
import { BUILT_IN_PROVIDER_NAMES, builtInProvider, builtInProviderBase, PROVIDER_DEFAULTS } from './builtin-providers';
import { type Diagnostic, hasErrors, sortDiagnostics } from './diagnostics';
import type { Env } from './env';
import { issueDiagnostics } from './issues';
import { schemaProblems } from './json-schema';
import { parseModelString } from './model-string';
import { templateRefs } from './prompt-template';
import {
  type AgentFile,
  agentFileSchema,
  type FlowFile,
  flowFileSchema,
  NAME_PATTERN,
  type ProjectFile,
  projectFileSchema,
  type ProviderFile,
  providerFileSchema,
} from './schema';
import type { AgentDef, FlowDef, FlowNodeDef, JsonSchema, LoadResult, Project } from './types';
import { type PathSegment, YamlSource } from './yaml-source';

export interface LoadOptions {
  /** environment for `${VAR}` expansion and the W_API_KEY check; default process.env */
  env?: Env;
}

interface Parsed<T> {
  src: YamlSource;
  data: T | null;
  diagnostics: Diagnostic[];
}

/** Parses one file against its schema; `env` expands `${VAR}` first (aqven.yaml, providers only). */
function parseFile<S extends z.ZodType>(file: string, text: string, schema: S, env?: Env): Parsed<z.output<S>> {
  const src = new YamlSource(file, text);
  const syntax = src.syntaxDiagnostics();
  if (syntax.length) return { src, data: null, diagnostics: syntax };
  const diagnostics = env ? src.expandEnv(env) : [];
  const raw = src.toJS();
  if (raw === null || raw === undefined) {
    diagnostics.push(src.diagnostic('E_FIELD', null, 'the file is empty', 'start the file with apiVersion: "aqven/v1" and kind'));
    return { src, data: null, diagnostics };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    diagnostics.push(src.diagnostic('E_FIELD', src.offsetOf([]), 'the file must be a mapping of keys to values', 'start the file with apiVersion: "aqven/v1" and kind'));
    return { src, data: null, diagnostics };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    diagnostics.push(...issueDiagnostics(src, schema, result.error.issues, raw));
    return { src, data: null, diagnostics };
  }
  return { src, data: diagnostics.length ? null : result.data, diagnostics };
}

function fileStem(file: string): string {
  return basename(file, extname(file));
}

function nameDiagnostic(src: YamlSource, what: 'provider' | 'agent' | 'flow'): Diagnostic[] {
  const name = fileStem(src.file);
  if (NAME_PATTERN.test(name)) return [];
  return [src.diagnostic('E_FIELD', null, `${what} name "${name}" (from the file name) may contain only letters, digits, "-" and "_"`, `rename the file, e.g. ${what}s/my-${what}.yaml`)];
}

// ---------------------------------------------------------------------------------------------
// providers

export function parseProviderYaml(text: string, file: string, opts: LoadOptions = {}): { provider: ResolvedProvider | null; diagnostics: Diagnostic[] } {
  const { provider, diagnostics } = providerFromSource(text, file, opts);
  return { provider, diagnostics };
}

function providerFromSource(text: string, file: string, opts: LoadOptions): { provider: ResolvedProvider | null; diagnostics: Diagnostic[]; src: YamlSource } {
  const { src, data, diagnostics } = parseFile(file, text, providerFileSchema, opts.env ?? process.env);
  diagnostics.push(...nameDiagnostic(src, 'provider'));
  if (!data) return { provider: null, diagnostics, src };
  const name = fileStem(file);
  if (data.name !== undefined && data.name !== name) {
    diagnostics.push(src.diagnostic('E_FIELD', src.offsetOf(['name']), `provider name "${data.name}" does not match the file name "${name}"`, `rename the file to providers/${data.name}.yaml or set name: "${name}"`));
  }
  const base = builtInProviderBase(name);
  if (!base) {
    for (const key of ['api', 'base_url'] as const) {
      if (data[key] === undefined) {
        diagnostics.push(src.diagnostic('E_FIELD', src.offsetOf([]), `missing required key "${key}" (the provider "${name}" is not built in)`, key === 'api' ? 'add api: "openai", "anthropic" or "gemini" (the wire protocol)' : 'add base_url: "https://…" (the endpoint of the API)'));
      }
    }
  }
  if (hasErrors(diagnostics)) return { provider: null, diagnostics, src };
  return { provider: resolveProvider(name, data), diagnostics, src };
}

function resolveProvider(name: string, data: ProviderFile): ResolvedProvider {
  const base = builtInProviderBase(name);
  const models: ResolvedProvider['models'] = {};
  for (const [id, m] of Object.entries(data.models)) {
    models[id] = {
      ...(m.input_per_mtok !== undefined && { inputPerMtok: m.input_per_mtok }),
      ...(m.output_per_mtok !== undefined && { outputPerMtok: m.output_per_mtok }),
      ...(m.structured_outputs !== undefined && { structuredOutputs: m.structured_outputs }),
    };
  }
  const apiKeyEnv = data.api_key_env ?? base?.apiKeyEnv;
  return {
    name,
    api: (data.api ?? base?.api)!,
    baseUrl: (data.base_url ?? base?.baseUrl)!.replace(/\/+$/, ''),
    ...(apiKeyEnv !== undefined && { apiKeyEnv }),
    structuredOutputs: data.structured_outputs ?? base?.structuredOutputs ?? PROVIDER_DEFAULTS.structuredOutputs,
    transport: { maxAttempts: data.transport.max_attempts, budgetMs: data.transport.budget, timeoutMs: data.transport.timeout },
    onRateLimit: { maxAttempts: data.on_rate_limit.max_attempts, defaultWaitMs: data.on_rate_limit.default_wait, maxWaitMs: data.on_rate_limit.max_wait },
    maxConcurrency: data.max_concurrency,
    models,
  };
}

// ---------------------------------------------------------------------------------------------
// agents

export interface AgentContext {
  /** known providers; when given, model strings are checked against them (E_PROVIDER, E_STRICT) */
  providers?: Record<string, ResolvedProvider>;
  /** providers whose file exists but is invalid: not reported again as unknown */
  brokenProviders?: ReadonlySet<string>;
}

function toAgentDef(name: string, file: string, data: AgentFile): AgentDef {
  return {
    name,
    file,
    ...(data.description !== undefined && { description: data.description }),
    model: data.model,
    fallbackModels: data.fallback_models,
    ...(data.system !== undefined && { system: data.system }),
    settings: data.settings,
    output: {
      strict: data.output.strict,
      retries: data.output.retries,
      onError: data.output.on_error,
      onRefusal: data.output.on_refusal,
      onTruncated: data.output.on_truncated,
    },
  };
}

/** Model strings of an agent with where they are written. */
function chainPaths(data: AgentFile): { model: string; path: PathSegment[] }[] {
  return [{ model: data.model, path: ['model'] }, ...data.fallback_models.map((model, i) => ({ model, path: ['fallback_models', i] }))];
}

function agentProviderDiagnostics(src: YamlSource, data: AgentFile, ctx: AgentContext): Diagnostic[] {
  const providers = ctx.providers;
  if (!providers) return [];
  const out: Diagnostic[] = [];
  for (const { model, path } of chainPaths(data)) {
    const ref = parseModelString(model)!;
    const provider = providers[ref.provider];
    if (!provider) {
      if (ctx.brokenProviders?.has(ref.provider)) continue;
      out.push(
        src.diagnostic(
          'E_PROVIDER',
          src.offsetOf(path),
          `model "${model}" names an unknown provider "${ref.provider}"`,
          `add providers/${ref.provider}.yaml, or use one of: ${Object.keys(providers).sort().join(', ')}`,
        ),
      );
      continue;
    }
    if (!data.output.strict) continue;
    if (!provider.structuredOutputs) {
      out.push(src.diagnostic('E_STRICT', src.offsetOf(['output', 'strict']), `output.strict is true but provider "${provider.name}" (model "${model}") has no structured_outputs`, 'set output.strict to false (AQVEN validates and repairs the output), or use a provider with structured_outputs: true'));
    } else if (provider.models[ref.modelId]?.structuredOutputs === false) {
      out.push(src.diagnostic('E_STRICT', src.offsetOf(['output', 'strict']), `output.strict is true but the catalogue of provider "${provider.name}" says model "${ref.modelId}" has no structured_outputs`, 'set output.strict to false (AQVEN validates and repairs the output), or use a model with structured outputs'));
    }
  }
  return out;
}

/**
 * Parses and checks one agent file. Without `ctx.providers` only the file itself is checked
 * (E_FIELD, E_MODEL, E_OUTCOME_FALLBACK); with it, its model strings too (E_PROVIDER, E_STRICT).
 */
export function parseAgentYaml(text: string, file: string, ctx: AgentContext = {}): { agent: AgentDef | null; diagnostics: Diagnostic[] } {
  const { agent, diagnostics } = agentFromSource(text, file, ctx);
  return { agent, diagnostics };
}

function agentFromSource(text: string, file: string, ctx: AgentContext): { agent: AgentDef | null; diagnostics: Diagnostic[]; src: YamlSource } {
  const { src, data, diagnostics } = parseFile(file, text, agentFileSchema);
  diagnostics.push(...nameDiagnostic(src, 'agent'));
  if (!data) return { agent: null, diagnostics, src };
  diagnostics.push(...agentProviderDiagnostics(src, data, ctx));
  return { agent: hasErrors(diagnostics) ? null : toAgentDef(fileStem(file), file, data), diagnostics, src };
}

// ---------------------------------------------------------------------------------------------
// flows

export interface FlowContext {
  /** names of the project's agents (files that exist, valid or not); when given, E_FLOW_AGENT is checked */
  agents?: ReadonlySet<string>;
}

function schemaDiagnostics(src: YamlSource, schema: unknown, path: PathSegment[], what: string): Diagnostic[] {
  return schemaProblems(schema).map((p) => {
    let offset = src.offsetOf([...path, ...p.path]);
    if (p.find) offset = findKeyOffset(src, path, p.find) ?? offset;
    const hint =
      p.find?.key === 'format'
        ? 'use a known format (date, date-time, time, email, hostname, ipv4, ipv6, uri, uuid, …) or remove it'
        : p.find
          ? `check the spelling of "${p.find.key}": unknown keywords are errors`
          : 'fix the JSON Schema (draft-07, as Ajv reads it)';
    return src.diagnostic('E_SCHEMA', offset, `${what} does not compile: ${p.message}`, hint);
  });
}

/** Offset of the first key named `find.key` (with value `find.value`) under `path`. */
function findKeyOffset(src: YamlSource, path: PathSegment[], find: { key: string; value?: string }): number | null {
  const walk = (value: unknown, p: PathSegment[]): number | null => {
    if (value === null || typeof value !== 'object') return null;
    for (const [k, v] of Object.entries(value)) {
      const here = [...p, Array.isArray(value) ? Number(k) : k];
      if (!Array.isArray(value) && k === find.key && (find.value === undefined || v === find.value)) return src.offsetOf(here, 'key');
      const inner = walk(v, here);
      if (inner !== null) return inner;
    }
    return null;
  };
  const root = src.nodeAt(path);
  return root ? walk((root as { toJSON(): unknown }).toJSON(), path) : null;
}

/** Property names a template may reference under a schema, or null when any name is allowed. */
function propertyNames(schema: JsonSchema | undefined): Set<string> | null {
  if (!schema) return new Set();
  const extra = schema.additionalProperties;
  if (extra === true || (extra !== null && typeof extra === 'object')) return null;
  const props = schema.properties;
  return new Set(props && typeof props === 'object' ? Object.keys(props) : []);
}

function templateDiagnostics(src: YamlSource, data: FlowFile, id: string): Diagnostic[] {
  const node = data.nodes[id];
  const path: PathSegment[] = ['nodes', id, 'prompt'];
  const { refs, errors } = templateRefs(node.prompt);
  const at = (raw: string) => src.offsetOfText(path, raw);
  const out: Diagnostic[] = errors.map((e) => src.diagnostic('E_TEMPLATE', at(e.raw), e.message, 'write references as {{ input.name }} or {{ nodes.<id>.output.name }}'));
  const inputProps = propertyNames(data.input);
  for (const ref of refs) {
    const [root, a, b, c] = ref.path;
    const bad = (message: string, hint: string) => out.push(src.diagnostic('E_TEMPLATE', at(ref.raw), message, hint));
    if (root === 'input') {
      if (a !== undefined && inputProps && !inputProps.has(a)) {
        bad(`${ref.raw} references input.${a}, which is not a property of the flow's input schema`, inputProps.size ? `use one of: ${[...inputProps].map((p) => `input.${p}`).join(', ')}, or add "${a}" to input.properties` : `add "${a}" to input.properties`);
      }
    } else if (root === 'nodes') {
      if (a === undefined) {
        bad(`${ref.raw} must name a node: {{ nodes.<id>.output }}`, 'write {{ nodes.<id>.output }} or {{ nodes.<id>.output.<field> }}');
      } else if (!Object.hasOwn(data.nodes, a)) {
        bad(`${ref.raw} references node "${a}", which is not in this flow`, `use one of: ${Object.keys(data.nodes).join(', ')}`);
      } else if (!node.needs.includes(a)) {
        bad(`${ref.raw} references node "${a}", which is not in the needs of "${id}"`, `add ${a} to nodes.${id}.needs so its output exists when "${id}" runs`);
      } else if (b !== 'output') {
        bad(`${ref.raw} must reference the node's output: {{ nodes.${a}.output… }}`, `write {{ nodes.${a}.output }}`);
      } else if (c !== undefined) {
        const target = data.nodes[a].output;
        if (!target) {
          bad(`${ref.raw} references a field, but node "${a}" produces text (it has no output schema)`, `write {{ nodes.${a}.output }}, or give node "${a}" an output schema`);
        } else {
          const props = propertyNames(target);
          if (props && !props.has(c)) bad(`${ref.raw} references "${c}", which is not a property of node "${a}"'s output schema`, props.size ? `use one of: ${[...props].join(', ')}` : `add "${c}" to the output schema of "${a}"`);
        }
      }
    } else {
      bad(`${ref.raw} references "${root}"; templates can reference input.* and nodes.<id>.output.*`, 'write {{ input.name }} or {{ nodes.<id>.output.name }}');
    }
  }
  return out;
}

/**
 * Cycles of "runs after" edges: a node runs after what it needs, and an on_fail node after the
 * node it handles. Each cycle is reported once, at the edge that closes it.
 */
function cycleDiagnostics(src: YamlSource, data: FlowFile): Diagnostic[] {
  type Edge = { from: string; to: string; kind: 'needs' | 'on_fail'; path: PathSegment[] };
  const known = (id: string) => Object.hasOwn(data.nodes, id);
  const after = new Map<string, Edge[]>(Object.keys(data.nodes).map((id) => [id, []]));
  for (const [id, node] of Object.entries(data.nodes)) {
    node.needs.forEach((to, i) => {
      if (known(to)) after.get(id)!.push({ from: id, to, kind: 'needs', path: ['nodes', id, 'needs', i] });
    });
    if (node.on_fail && known(node.on_fail) && node.on_fail !== id) {
      after.get(node.on_fail)!.push({ from: node.on_fail, to: id, kind: 'on_fail', path: ['nodes', id, 'on_fail'] });
    }
  }
  const describe = (e: Edge) => (e.kind === 'needs' ? `${e.from} needs ${e.to}` : `${e.from} runs when ${e.to} fails`);
  const out: Diagnostic[] = [];
  const state = new Map<string, 'active' | 'done'>();
  const trail: Edge[] = [];
  const seen = new Set<string>();
  const visit = (id: string): void => {
    state.set(id, 'active');
    for (const edge of after.get(id)!) {
      if (state.get(edge.to) === 'active') {
        const from = trail.findIndex((e) => e.from === edge.to);
        const cycle = [...(from >= 0 ? trail.slice(from) : []), edge];
        const key = cycle.map((e) => e.from).sort().join(',');
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(
          src.diagnostic(
            'E_FLOW_NEEDS',
            src.offsetOf(edge.path),
            cycle.length === 1 ? `node "${id}" needs itself` : `nodes form a cycle: ${cycle.map(describe).join(', ')}`,
            cycle.length === 1 ? `remove "${id}" from nodes.${id}.needs` : 'remove one of these needs (or the on_fail) so the nodes can run in order',
          ),
        );
      } else if (!state.has(edge.to)) {
        trail.push(edge);
        visit(edge.to);
        trail.pop();
      }
    }
    state.set(id, 'done');
  };
  for (const id of Object.keys(data.nodes)) if (!state.has(id)) visit(id);
  return out;
}

/** The needs path from `from` to `to` ([from, …, to]), if `from` needs `to` directly or not. */
function needsChain(data: FlowFile, from: string, to: string): string[] | null {
  const seen = new Set<string>();
  const walk = (id: string): string[] | null => {
    if (id === to) return [id];
    if (seen.has(id) || !Object.hasOwn(data.nodes, id)) return null;
    seen.add(id);
    for (const need of data.nodes[id].needs) {
      const rest = walk(need);
      if (rest) return [id, ...rest];
    }
    return null;
  };
  return from === to ? null : walk(from);
}

function flowDiagnostics(src: YamlSource, data: FlowFile, ctx: FlowContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  out.push(...schemaDiagnostics(src, data.input, ['input'], 'the input schema'));
  const ids = Object.keys(data.nodes);
  for (const [id, node] of Object.entries(data.nodes)) {
    if (ctx.agents && !ctx.agents.has(node.agent)) {
      out.push(src.diagnostic('E_FLOW_AGENT', src.offsetOf(['nodes', id, 'agent']), `node "${id}" uses agent "${node.agent}", which does not exist`, ctx.agents.size ? `add agents/${node.agent}.yaml, or use one of: ${[...ctx.agents].sort().join(', ')}` : `add agents/${node.agent}.yaml`));
    }
    node.needs.forEach((need, i) => {
      if (!Object.hasOwn(data.nodes, need)) {
        out.push(src.diagnostic('E_FLOW_NEEDS', src.offsetOf(['nodes', id, 'needs', i]), `node "${id}" needs "${need}", which is not a node of this flow`, `use one of: ${ids.filter((n) => n !== id).join(', ') || '(no other nodes)'}`));
      }
    });
    if (node.on_fail !== undefined) {
      const at = src.offsetOf(['nodes', id, 'on_fail']);
      if (!Object.hasOwn(data.nodes, node.on_fail)) {
        out.push(src.diagnostic('E_FLOW_NEEDS', at, `on_fail of node "${id}" names "${node.on_fail}", which is not a node of this flow`, `use one of: ${ids.filter((n) => n !== id).join(', ') || '(no other nodes)'}`));
      } else if (node.on_fail === id) {
        out.push(src.diagnostic('E_FLOW_NEEDS', at, `node "${id}" names itself in on_fail`, 'name another node to run when this one fails'));
      } else {
        const chain = needsChain(data, node.on_fail, id);
        if (chain) {
          const through = chain.length > 2 ? ` (through ${chain.slice(1, -1).join(', ')})` : '';
          out.push(src.diagnostic('E_FLOW_NEEDS', at, `node "${node.on_fail}" runs when "${id}" fails, but it needs "${id}"${through}, so it would be skipped`, `remove "${chain[1]}" from nodes.${chain[0]}.needs, or route to another node`));
        }
      }
    }
    if (node.output) out.push(...schemaDiagnostics(src, node.output, ['nodes', id, 'output'], `the output schema of node "${id}"`));
    out.push(...templateDiagnostics(src, data, id));
  }
  out.push(...cycleDiagnostics(src, data));
  return out;
}

function toFlowDef(name: string, file: string, data: FlowFile): FlowDef {
  const nodes: Record<string, FlowNodeDef> = {};
  for (const [id, n] of Object.entries(data.nodes)) {
    nodes[id] = {
      id,
      agent: n.agent,
      prompt: n.prompt,
      needs: n.needs,
      ...(n.output !== undefined && { output: n.output }),
      stream: n.stream,
      ...(n.on_fail !== undefined && { onFail: n.on_fail }),
    };
  }
  return { name, file, ...(data.description !== undefined && { description: data.description }), inputSchema: data.input, nodes };
}

/** Parses and checks one flow file; with `ctx.agents`, node agents are checked too. */
export function parseFlowYaml(text: string, file: string, ctx: FlowContext = {}): { flow: FlowDef | null; diagnostics: Diagnostic[] } {
  const { src, data, diagnostics } = parseFile(file, text, flowFileSchema);
  diagnostics.push(...nameDiagnostic(src, 'flow'));
  if (!data) return { flow: null, diagnostics };
  diagnostics.push(...flowDiagnostics(src, data, ctx));
  return { flow: hasErrors(diagnostics) ? null : toFlowDef(fileStem(file), file, data), diagnostics };
}

// ---------------------------------------------------------------------------------------------
// the project

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The YAML files of a project sub-folder, as paths relative to the project. */
async function yamlFiles(dir: string, sub: string): Promise<string[]> {
  if (!(await isDir(join(dir, sub)))) return [];
  const entries = await readdir(join(dir, sub), { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => `${sub}/${e.name}`)
    .sort();
}

/** Duplicate names (a.yaml and a.yml) are an error on the second file. */
function duplicates(files: string[]): { unique: string[]; diagnostics: Diagnostic[] } {
  const byName = new Map<string, string>();
  const diagnostics: Diagnostic[] = [];
  for (const f of files) {
    const prev = byName.get(fileStem(f));
    if (prev) diagnostics.push({ file: f, line: 1, col: 1, severity: 'error', code: 'E_FIELD', message: `"${fileStem(f)}" is defined twice: ${prev} and ${f}`, hint: `remove or rename one of the two files` });
    else byName.set(fileStem(f), f);
  }
  return { unique: [...byName.values()], diagnostics };
}

export async function loadProject(dir: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const env = opts.env ?? process.env;
  const root = resolve(dir);
  const diagnostics: Diagnostic[] = [];
  const read = (file: string) => readFile(join(root, file), 'utf8');

  // aqven.yaml
  let projectFile: ProjectFile | null = null;
  let projectText: string | null = null;
  try {
    projectText = await read('aqven.yaml');
  } catch {
    diagnostics.push({ file: 'aqven.yaml', line: 1, col: 1, severity: 'error', code: 'E_FIELD', message: `no aqven.yaml in ${root}`, hint: 'pass the project folder with --project DIR, or create one with `aqven init DIR`' });
  }
  if (projectText !== null) {
    const parsed = parseFile('aqven.yaml', projectText, projectFileSchema, env);
    diagnostics.push(...parsed.diagnostics);
    projectFile = parsed.data;
  }

  // providers: built-ins unless a file overrides them
  const providers: Record<string, ResolvedProvider> = {};
  for (const name of BUILT_IN_PROVIDER_NAMES) providers[name] = builtInProvider(name)!;
  const brokenProviders = new Set<string>();
  const providerSources = new Map<string, YamlSource>();
  const providerFiles = duplicates(await yamlFiles(root, 'providers'));
  diagnostics.push(...providerFiles.diagnostics);
  for (const file of providerFiles.unique) {
    const name = fileStem(file);
    const text = await read(file);
    const { provider, diagnostics: d, src } = providerFromSource(text, file, { env });
    diagnostics.push(...d);
    providerSources.set(name, src);
    if (provider) providers[name] = provider;
    else {
      delete providers[name];
      brokenProviders.add(name);
    }
  }

  // agents
  const agents: Record<string, AgentDef> = {};
  const agentFiles = duplicates(await yamlFiles(root, 'agents'));
  diagnostics.push(...agentFiles.diagnostics);
  const agentNames = new Set(agentFiles.unique.map(fileStem));
  /** provider → first place a model string names it, for W_API_KEY */
  const usedProviders = new Map<string, { src: YamlSource; path: PathSegment[]; agents: string[] }>();
  for (const file of agentFiles.unique) {
    const text = await read(file);
    const { agent, diagnostics: d, src } = agentFromSource(text, file, { providers, brokenProviders });
    diagnostics.push(...d);
    if (!agent) continue;
    agents[agent.name] = agent;
    [agent.model, ...agent.fallbackModels].forEach((model, i) => {
      const provider = parseModelString(model)!.provider;
      const used = usedProviders.get(provider);
      if (used) {
        if (!used.agents.includes(agent.name)) used.agents.push(agent.name);
      } else usedProviders.set(provider, { src, path: i === 0 ? ['model'] : ['fallback_models', i - 1], agents: [agent.name] });
    });
  }

  // flows
  const flows: Record<string, FlowDef> = {};
  const flowFiles = duplicates(await yamlFiles(root, 'flows'));
  diagnostics.push(...flowFiles.diagnostics);
  for (const file of flowFiles.unique) {
    const { flow, diagnostics: d } = parseFlowYaml(await read(file), file, { agents: agentNames });
    diagnostics.push(...d);
    if (flow) flows[flow.name] = flow;
  }

  // W_API_KEY: only for providers some agent actually calls
  for (const [name, use] of usedProviders) {
    const provider = providers[name];
    if (!provider?.apiKeyEnv) continue;
    const value = env[provider.apiKeyEnv];
    if (value !== undefined && value !== '') continue;
    const providerSrc = providerSources.get(name);
    const inFile = providerSrc?.nodeAt(['api_key_env']) ? providerSrc : undefined;
    const src = inFile ?? use.src;
    const offset = inFile ? inFile.offsetOf(['api_key_env']) : use.src.offsetOf(use.path);
    diagnostics.push(
      src.diagnostic(
        'W_API_KEY',
        offset,
        `${provider.apiKeyEnv} is not set: provider "${name}" (used by ${use.agents.map((a) => `agents/${a}`).join(', ')}) cannot be called`,
        `export ${provider.apiKeyEnv}=… before \`aqven run\`, or run with --simulate`,
      ),
    );
  }

  const sorted = sortDiagnostics(diagnostics);
  if (hasErrors(sorted) || !projectFile) return { project: null, diagnostics: sorted };
  const database = projectFile.database;
  const project: Project = {
    dir: root,
    name: projectFile.name ?? basename(root),
    databasePath: database === ':memory:' || isAbsolute(database) ? database : join(root, database),
    simulate: {
      seed: projectFile.simulate.seed,
      chaos: projectFile.simulate.chaos,
      latency: projectFile.simulate.latency,
      scripts: projectFile.simulate.scripts as ScriptMap,
    },
    providers,
    agents,
    flows,
  };
  return { project, diagnostics: sorted };
}

/** The diagnostics of `loadProject`: what `aqven check` prints. */
export async function checkProject(dir: string, opts: LoadOptions = {}): Promise<Diagnostic[]> {
  return (await loadProject(dir, opts)).diagnostics;
}
