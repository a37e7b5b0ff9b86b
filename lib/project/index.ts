// lib/project: load + validate project files, `aqven check`, prompt templates
// (DESIGN: Project files; DESIGN: CLI).
export { loadProject, checkProject, parseAgentYaml, parseFlowYaml, parseProviderYaml } from './load';
export type { LoadOptions, AgentContext, FlowContext } from './load';
export { agentPolicy } from './types';
export type { AgentDef, AgentSettings, AlertsConfig, FlowDef, FlowNodeDef, JsonSchema, LoadResult, Project, SimulateConfig } from './types';
export { ALERT_DEFAULTS } from './alerts-schema';
export { capDiagnostics, CHECK_CODES, countOf, formatDiagnostic, hasErrors, severityOf, sortDiagnostics } from './diagnostics';
export { LIMITS } from './limits';
export type { CheckCode, Diagnostic, PathSegment, Severity } from './diagnostics';
export { agentFileSchema, agentPolicyFormSchema, flowFileSchema, projectFileSchema, providerFileSchema, modelStringSchema, outcomePolicySchema } from './schema';
export type { AgentFile, AgentPolicyForm, FlowFile, IssueParams, ProjectFile, ProviderFile } from './schema';
export { issueCode } from './issues';
export { updateAgentYaml, AgentYamlError } from './agent-yaml';
export type { AgentYamlChanges } from './agent-yaml';
export { renderTemplate, templateRefs } from './prompt-template';
export type { TemplateContext, TemplateRef, TemplateScan, TemplateSyntaxError } from './prompt-template';
export { schemaProblems } from './json-schema';
export { formatDuration, parseDuration } from './duration';
export { expandEnv } from './env';
export type { Env } from './env';
export { BUILT_IN_PROVIDER_NAMES, builtInProvider, PROVIDER_DEFAULTS } from './builtin-providers';
export {
  checkProjectFiles,
  materializeProject,
  PROJECT_FILE,
  PROJECT_FOLDERS,
  projectFilesHash,
  ProjectFilesError,
  projectPathProblem,
  readProjectFiles,
  snapshotCacheDir,
  writeProjectFiles,
} from './project-files';
export type { ProjectFiles, WriteOptions, WriteResult } from './project-files';
