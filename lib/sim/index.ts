// The provider simulator (DESIGN: The provider simulator). See README.md in this folder.
export { simBaseUrl, startSimulator } from './server';
export { SIM_PRICE, simCost } from './render-openai';
export { sampleFromSchema } from './schema-json';
// the strict:false instruction the engine appends to the last user message (DESIGN: One model call, in order, step 1)
export { SCHEMA_INSTRUCTION } from '../shared/schema-instruction';
export { validateChaos, validateLatency, validateScripts } from './validate';
export { loadScenario, parseScenario, type Scenario } from './scenario';
export { CHAOS_FAULTS, chaosSchema, latencySchema, scenarioSchema, scriptMapSchema, scriptStepSchema } from './script-schema';
export type * from './types';
