// The provider simulator (DESIGN.md §13). See README.md in this folder.
export { startSimulator } from './server';
export { SIM_PRICE, simCost } from './render-openai';
export { sampleFromSchema } from './schema-json';
export { SCHEMA_INSTRUCTION } from './request-info';
export { validateChaos, validateLatency, validateScripts } from './validate';
export { loadScenario, parseScenario, type Scenario } from './scenario';
export type * from './types';
