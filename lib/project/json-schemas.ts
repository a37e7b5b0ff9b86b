// The project files' JSON Schemas, for editors (completion and inline errors through the YAML
// language server): generated from the zod schemas `aqven check` parses with, so the two cannot
// drift. They describe what a file may hold; the checks that need more than one file (a model's
// provider, an agent a node names, E_STRICT, the environment-variable rules) stay `aqven check`'s.
// Written to schemas/ by `npm run docs:generate`; a test fails when schemas/ is stale.
import { z } from 'zod';
import { agentFileSchema, flowFileSchema, projectFileSchema, providerFileSchema } from './schema';

/** schemas/<file> → the file kind it describes */
export const JSON_SCHEMA_FILES = {
  'aqven.schema.json': { kind: 'Project', title: 'AQVEN project (aqven.yaml)', schema: projectFileSchema },
  'provider.schema.json': { kind: 'Provider', title: 'AQVEN provider (providers/NAME.yaml)', schema: providerFileSchema },
  'agent.schema.json': { kind: 'Agent', title: 'AQVEN agent (agents/NAME.yaml)', schema: agentFileSchema },
  'flow.schema.json': { kind: 'Flow', title: 'AQVEN flow (flows/NAME.yaml)', schema: flowFileSchema },
} as const;

export type JsonSchemaFile = keyof typeof JSON_SCHEMA_FILES;

/** The schema file for a project file's path relative to its project ("agents/x.yaml" → agent.schema.json), or null. */
export function schemaFileFor(relPath: string): JsonSchemaFile | null {
  if (relPath === 'aqven.yaml') return 'aqven.schema.json';
  const folder = /^(providers|agents|flows)\/[^/]+\.ya?ml$/.exec(relPath)?.[1];
  return folder ? (`${folder.slice(0, -1)}.schema.json` as JsonSchemaFile) : null;
}

/** A file's JSON Schema as written — the input side of every transform (what a file holds) — in draft-07, the newest the YAML language server reads. */
export function projectJsonSchema(file: JsonSchemaFile): Record<string, unknown> {
  const { title, schema } = JSON_SCHEMA_FILES[file];
  const json = z.toJSONSchema(schema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  const { $schema, ...rest } = json;
  return { $schema, title, ...rest };
}

/** schemas/<file> as `npm run docs:generate` writes it. */
export function projectJsonSchemaText(file: JsonSchemaFile): string {
  return `${JSON.stringify(projectJsonSchema(file), null, 2)}\n`;
}
