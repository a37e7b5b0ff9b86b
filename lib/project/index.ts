// lib/project: load + validate project files, `aqven check`, prompt templates (DESIGN.md §3, §12).
export { loadProject, checkProject, parseAgentYaml, parseFlowYaml, parseProviderYaml } from './load';
export type { LoadOptions, AgentContext, FlowContext } from './load';
export { agentPolicy } from './types';
export type { AgentDef, AgentSettings, FlowDef, FlowNodeDef, JsonSchema, LoadResult, Project, SimulateConfig } from './types';
export { CHECK_CODES, formatDiagnostic, hasErrors, severityOf, sortDiagnostics } from './diagnostics';
export type { CheckCode, Diagnostic, Severity } from './diagnostics';
export {
  agentFileSchema,
  agentPolicyFormSchema,
  flowFileSchema,
  projectFileSchema,
  providerFileSchema,
  modelStringSchema,
  outcomePolicySchema,
} from './schema';
export type { AgentFile, AgentPolicyForm, FlowFile, IssueParams, ProjectFile, ProviderFile } from './schema';
export { issueCode } from './issues';
export { updateAgentYaml, AgentYamlError } from './agent-yaml';
export type { AgentYamlChanges } from './agent-yaml';
export { renderTemplate, templateRefs } from './prompt-template';
export type { TemplateContext, TemplateRef, TemplateScan, TemplateSyntaxError } from './prompt-template';
export { createAjv, schemaProblems } from './json-schema';
export { parseDuration } from './duration';
export { parseModelString } from './model-string';
export type { ModelRef } from './model-string';
export { expandEnv } from './env';
export type { Env } from './env';
export { BUILT_IN_PROVIDER_NAMES, builtInProvider, PROVIDER_DEFAULTS } from './builtin-providers';
