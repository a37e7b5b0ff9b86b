// What `loadProject` returns: every file of a project, validated, with defaults applied and
// durations in milliseconds. The flow runner, the CLI and the dashboard consume these types.
import type { NodePolicy, OutcomePolicy, ResolvedProvider } from '../engine/types';
import type { ChaosProfile, Latency, ScriptMap, SimLimits } from '../sim/script-schema';
import type { Diagnostic } from './diagnostics';

export type JsonSchema = Record<string, unknown>;

export interface AgentSettings {
  temperature?: number;
  max_tokens?: number;
  [k: string]: unknown;
}

export interface AgentDef {
  name: string;
  /** relative to the project folder, e.g. "agents/classifier.yaml" */
  file: string;
  description?: string;
  model: string;
  fallbackModels: string[];
  system?: string;
  settings: AgentSettings;
  output: {
    strict: boolean;
    retries: number;
    onError: OutcomePolicy;
    onRefusal: OutcomePolicy;
    onTruncated: OutcomePolicy;
  };
}

export interface FlowNodeDef {
  id: string;
  agent: string;
  prompt: string;
  needs: string[];
  /** JSON Schema of the node's output; absent = text output */
  output?: JsonSchema;
  stream: boolean;
  /** the node that runs when this one fails */
  onFail?: string;
}

export interface FlowDef {
  name: string;
  file: string;
  description?: string;
  inputSchema: JsonSchema;
  nodes: Record<string, FlowNodeDef>;
}

export interface SimulateConfig {
  seed: number;
  chaos: ChaosProfile;
  latency: Latency;
  scripts: ScriptMap;
  /** structural limits per model id as sent on the wire; absent when none are declared */
  limits?: SimLimits;
}

/** aqven.yaml's `alerts:` (lib/project/alerts-schema.ts); evaluated and sent by lib/observe/alerts/. */
export interface AlertsConfig {
  /** the URL is read from the variable `urlEnv` names when an alert is sent, never stored */
  webhook: { urlEnv: string; format: 'slack' | 'generic' };
  /** one alert per key per cool-down, across every process of the database */
  cooldownMs: number;
  /** each rule's settings; null: switched off (`enabled: false`) */
  rules: {
    newFailure: { newForMs: number } | null;
    failureShare: { threshold: number; windowMs: number; minNodes: number } | null;
    modelPaused: { longerThanMs: number } | null;
    queueWait: { longerThanMs: number } | null;
  };
}

export interface Project {
  /** absolute */
  dir: string;
  name: string;
  /** absolute; default <dir>/.aqven/aqven.db */
  databasePath: string;
  /** aqven.yaml `retention` in ms: runs started longer ago are purged (`aqven runs purge`); absent: kept */
  retentionMs?: number;
  /** aqven.yaml `alerts:`; absent: no alert is evaluated or sent */
  alerts?: AlertsConfig;
  simulate: SimulateConfig;
  providers: Record<string, ResolvedProvider>;
  agents: Record<string, AgentDef>;
  flows: Record<string, FlowDef>;
}

export interface LoadResult {
  /** null when there are errors (warnings allowed) */
  project: Project | null;
  diagnostics: Diagnostic[];
}

/** The engine's policy for a node run by this agent: chain, budget and outcome policies. */
export function agentPolicy(agent: AgentDef): NodePolicy {
  return {
    chain: [agent.model, ...agent.fallbackModels],
    retries: agent.output.retries,
    onError: agent.output.onError,
    onRefusal: agent.output.onRefusal,
    onTruncated: agent.output.onTruncated,
    strict: agent.output.strict,
  };
}
