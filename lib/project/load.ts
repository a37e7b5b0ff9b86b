// Loads and checks an AQVEN project folder (DESIGN: Project files; DESIGN: CLI): every file is
// parsed with its positions and validated against its zod schema (parse-file.ts), then checked
// across files (providers of model strings here, flows in check-flows.ts). All problems are
// collected, so one `aqven check` shows them all.
// One provider file is read in provider-yaml.ts; the checks that need agents and providers together
// (W_API_KEY, W_UNPRICED, E_PROVIDER_HOST) are in project-checks.ts.
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { ResolvedProvider } from '../engine/types';
import { BUILT_IN_PROVIDER_NAMES, builtInProvider } from './builtin-providers';
import { type FlowContext, flowDiagnostics } from './check-flows';
import { own } from '../shared/own';
import { capDiagnostics, type Diagnostic, hasErrors } from './diagnostics';
import { listNames, quote } from './limits';
import type { Env } from './env';
import { parseModelString } from '../engine/model-string';
import { fileStem, nameDiagnostic, parseFile } from './parse-file';
import { projectYamlFiles as yamlFiles } from './project-files';
import { readProjectText } from './read-text';
import { alertWebhookWarnings, apiKeyWarnings, type LoadedProviders, type ModelUse, providerHostErrors, type ProviderUse, unpricedWarnings } from './project-checks';
import { type LoadOptions, providerFromSource } from './provider-yaml';
import { toAlertsConfig } from './alerts-schema';
import { type AgentFile, agentFileSchema, type FlowFile, flowFileSchema, type ProjectFile, projectFileSchema } from './schema';
import type { AgentDef, FlowDef, FlowNodeDef, LoadResult, Project } from './types';
import type { PathSegment, YamlSource } from './yaml-source';

export type { FlowContext, LoadOptions };
export { parseProviderYaml } from './provider-yaml';

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
    const provider = own(providers, ref.provider);
    if (!provider) {
      if (ctx.brokenProviders?.has(ref.provider)) continue;
      out.push(
        src.diagnosticAt(
          'E_PROVIDER',
          path,
          `model "${quote(model)}" names an unknown provider "${ref.provider}"`,
          `add providers/${ref.provider}.yaml, or use one of: ${listNames(Object.keys(providers).sort())}`,
        ),
      );
      continue;
    }
    if (!data.output.strict) continue;
    if (!provider.structuredOutputs) {
      out.push(
        src.diagnosticAt(
          'E_STRICT',
          ['output', 'strict'],
          `output.strict is true but provider "${provider.name}" (model "${model}") has no structured_outputs`,
          'set output.strict to false (AQVEN validates and repairs the output), or use a provider with structured_outputs: true',
        ),
      );
    } else if (own(provider.models, ref.modelId)?.structuredOutputs === false) {
      out.push(
        src.diagnosticAt(
          'E_STRICT',
          ['output', 'strict'],
          `output.strict is true but the catalogue of provider "${provider.name}" says model "${ref.modelId}" has no structured_outputs`,
          'set output.strict to false (AQVEN validates and repairs the output), or use a model with structured outputs',
        ),
      );
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
  return { agent, diagnostics: capDiagnostics(diagnostics) };
}

function agentFromSource(text: string, file: string, ctx: AgentContext): { agent: AgentDef | null; diagnostics: Diagnostic[]; src: YamlSource } {
  const { src, data, diagnostics } = parseFile(file, text, agentFileSchema);
  diagnostics.push(...nameDiagnostic(src, 'agent'));
  if (!data) return { agent: null, diagnostics, src };
  diagnostics.push(...agentProviderDiagnostics(src, data, ctx));
  return { agent: hasErrors(diagnostics) ? null : toAgentDef(fileStem(file), file, data), diagnostics, src };
}

// ---------------------------------------------------------------------------------------------
// flows (their checks: check-flows.ts)

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
  if (!data) return { flow: null, diagnostics: capDiagnostics(diagnostics) };
  diagnostics.push(...flowDiagnostics(src, data, ctx));
  return { flow: hasErrors(diagnostics) ? null : toFlowDef(fileStem(file), file, data), diagnostics: capDiagnostics(diagnostics) };
}

// ---------------------------------------------------------------------------------------------
// the project: read the files, parse and check each kind, then resolve

/** Duplicate names (a.yaml and a.yml) are an error on the second file. */
function duplicates(files: string[]): { unique: string[]; diagnostics: Diagnostic[] } {
  const byName = new Map<string, string>();
  const diagnostics: Diagnostic[] = [];
  for (const f of files) {
    const prev = byName.get(fileStem(f));
    if (prev)
      diagnostics.push({
        file: f,
        line: 1,
        col: 1,
        severity: 'error',
        code: 'E_FIELD',
        message: `"${fileStem(f)}" is defined twice: ${prev} and ${f}`,
        hint: `remove or rename one of the two files`,
        path: [],
      });
    else byName.set(fileStem(f), f);
  }
  return { unique: [...byName.values()], diagnostics };
}

/** A file's text, or the diagnostic that says why it cannot be read (too big, not UTF-8). */
type Read = (file: string) => Promise<string | Diagnostic>;

async function readProjectFile(root: string, read: Read, env: Env): Promise<{ projectFile: ProjectFile | null; diagnostics: Diagnostic[] }> {
  let text: string | Diagnostic;
  try {
    text = await read('aqven.yaml');
    if (typeof text !== 'string') return { projectFile: null, diagnostics: [text] };
  } catch {
    const hint = 'pass the project folder with --project DIR, or create one with `aqven init DIR`';
    return { projectFile: null, diagnostics: [{ file: 'aqven.yaml', line: 1, col: 1, severity: 'error', code: 'E_FIELD', message: `no aqven.yaml in ${root}`, hint, path: [] }] };
  }
  const parsed = parseFile('aqven.yaml', text, projectFileSchema, env);
  const warnings = parsed.data ? alertWebhookWarnings(parsed.src, parsed.data, env) : [];
  return { projectFile: parsed.data, diagnostics: [...parsed.diagnostics, ...warnings] };
}

/** Built-ins unless a file overrides them. */
async function loadProviders(root: string, read: Read, env: Env): Promise<LoadedProviders> {
  const providers: Record<string, ResolvedProvider> = {};
  for (const name of BUILT_IN_PROVIDER_NAMES) providers[name] = builtInProvider(name)!;
  const broken = new Set<string>();
  const sources = new Map<string, YamlSource>();
  const files = duplicates(await yamlFiles(root, 'providers'));
  const diagnostics = [...files.diagnostics];
  for (const file of files.unique) {
    const name = fileStem(file);
    const text = await read(file);
    const { provider, diagnostics: d, src } = typeof text === 'string' ? providerFromSource(text, file, { env }) : { provider: null, diagnostics: [text], src: null };
    diagnostics.push(...d);
    if (src) sources.set(name, src);
    if (provider) providers[name] = provider;
    else {
      delete providers[name];
      broken.add(name);
    }
  }
  return { providers, broken, sources, diagnostics };
}

async function loadAgents(
  root: string,
  read: Read,
  ctx: Required<AgentContext>,
): Promise<{ agents: Record<string, AgentDef>; names: Set<string>; used: ProviderUse; models: ModelUse[]; diagnostics: Diagnostic[] }> {
  const agents: Record<string, AgentDef> = {};
  const files = duplicates(await yamlFiles(root, 'agents'));
  const diagnostics = [...files.diagnostics];
  const names = new Set(files.unique.map(fileStem));
  const used: ProviderUse = new Map();
  const models: ModelUse[] = [];
  for (const file of files.unique) {
    const text = await read(file);
    if (typeof text !== 'string') {
      diagnostics.push(text);
      continue;
    }
    const { agent, diagnostics: d, src } = agentFromSource(text, file, ctx);
    diagnostics.push(...d);
    if (!agent) continue;
    agents[agent.name] = agent;
    [agent.model, ...agent.fallbackModels].forEach((model, i) => {
      const provider = parseModelString(model)!.provider;
      models.push({ src, path: i === 0 ? ['model'] : ['fallback_models', i - 1], model, agent: agent.name });
      const use = used.get(provider);
      if (use) {
        if (!use.agents.includes(agent.name)) use.agents.push(agent.name);
      } else used.set(provider, { src, path: i === 0 ? ['model'] : ['fallback_models', i - 1], agents: [agent.name] });
    });
  }
  return { agents, names, used, models, diagnostics };
}

async function loadFlows(root: string, read: Read, ctx: FlowContext): Promise<{ flows: Record<string, FlowDef>; diagnostics: Diagnostic[] }> {
  const flows: Record<string, FlowDef> = {};
  const files = duplicates(await yamlFiles(root, 'flows'));
  const diagnostics = [...files.diagnostics];
  for (const file of files.unique) {
    const text = await read(file);
    const { flow, diagnostics: d } = typeof text === 'string' ? parseFlowYaml(text, file, ctx) : { flow: null, diagnostics: [text] };
    diagnostics.push(...d);
    if (flow) flows[flow.name] = flow;
  }
  return { flows, diagnostics };
}

function resolveProject(root: string, file: ProjectFile, parts: Pick<Project, 'providers' | 'agents' | 'flows'>): Project {
  const { database, simulate } = file;
  return {
    dir: root,
    name: file.name ?? basename(root),
    databasePath: database === ':memory:' || isAbsolute(database) ? database : join(root, database),
    ...(file.retention !== undefined && { retentionMs: file.retention }),
    ...(file.alerts !== undefined && { alerts: toAlertsConfig(file.alerts) }),
    simulate: {
      // a scenario pasted into simulate: may carry its seed in chaos
      seed: simulate.seed ?? simulate.chaos.seed ?? 0,
      chaos: simulate.chaos,
      latency: simulate.latency,
      scripts: simulate.scripts,
      ...(simulate.limits && { limits: simulate.limits }),
    },
    ...parts,
  };
}

export async function loadProject(dir: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const env = opts.env ?? process.env;
  const root = resolve(dir);
  const read: Read = (file) => readProjectText(root, file);

  const { projectFile, diagnostics } = await readProjectFile(root, read, env);
  const providers = await loadProviders(root, read, env);
  const agents = await loadAgents(root, read, { providers: providers.providers, brokenProviders: providers.broken });
  const flows = await loadFlows(root, read, { agents: agents.names });
  diagnostics.push(
    ...providers.diagnostics,
    ...agents.diagnostics,
    ...flows.diagnostics,
    ...providerHostErrors(agents.used, providers, env),
    ...apiKeyWarnings(agents.used, providers, env),
    ...unpricedWarnings(agents.models, providers),
  );

  // at most LIMITS.diagnosticsPerFile errors per file, the rest counted in one E_MORE
  const sorted = capDiagnostics(diagnostics);
  if (hasErrors(sorted) || !projectFile) return { project: null, diagnostics: sorted };
  const project = resolveProject(root, projectFile, { providers: providers.providers, agents: agents.agents, flows: flows.flows });
  return { project, diagnostics: sorted };
}

/** The diagnostics of `loadProject`: what `aqven check` prints. */
export async function checkProject(dir: string, opts: LoadOptions = {}): Promise<Diagnostic[]> {
  return (await loadProject(dir, opts)).diagnostics;
}
