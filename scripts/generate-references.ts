// `npm run docs:generate`: writes what is generated from the code, so it cannot drift from it —
// the project files' JSON Schemas in schemas/ (lib/project/json-schemas.ts). test/docs/generated.test.ts
// fails when a written file differs from what this would write.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSON_SCHEMA_FILES, projectJsonSchemaText, type JsonSchemaFile } from '../lib/project/json-schemas';

const root = fileURLToPath(new URL('..', import.meta.url));

/** every generated file, by its path from the repository's root */
export function generatedFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of Object.keys(JSON_SCHEMA_FILES) as JsonSchemaFile[]) files[`schemas/${f}`] = projectJsonSchemaText(f);
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, text] of Object.entries(generatedFiles())) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
    console.log(`wrote ${path}`);
  }
}
