// The project files' reference page reads every field off the JSON Schemas (themselves from the zod
// schemas aqven check uses): every description reaches the page, and a field's row says its type,
// whether it must be there and its default.
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FILES, projectJsonSchema, type JsonSchemaFile } from './json-schemas';
import { fieldRows, projectFileReference } from './project-file-reference';

/** every `description` anywhere in a schema, found without the page's own walk */
function descriptions(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) descriptions(n, out);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' && typeof v === 'string') out.push(v);
      else descriptions(v, out);
    }
  return out;
}

const page = projectFileReference();
const row = (path: string) => page.split('\n').find((l) => l.startsWith(`| \`${path}\` |`));

describe('the project files reference', () => {
  it.each(Object.keys(JSON_SCHEMA_FILES) as JsonSchemaFile[])('%s: every description of the schema is on the page', (file) => {
    const schema = projectJsonSchema(file);
    // the file's own description heads its section; its fields' are in their rows
    for (const d of descriptions(schema)) expect(page).toContain(d.replace(/\|/g, '\\|'));
  });

  it('a row says the type, whether the field is required, and its default', () => {
    expect(row('output.retries')).toBe('| `output.retries` | integer (≥ 0, ≤ 10) |  | `1` | one model answers a node at most retries + 1 times; repairs and retries share it |');
    expect(row('model')).toMatch(/^\| `model` \| string \(a model string "provider:model-id"\) \| yes \|/);
    expect(row('output.on_error')).toContain('one of "fail", "retry", "fallback"');
    expect(row('kind')).toContain('exactly "Project"');
  });

  it("a map's entries are rows of their own under <name>, with their own required fields", () => {
    const flow = fieldRows(projectJsonSchema('flow.schema.json') as Parameters<typeof fieldRows>[0]);
    expect(flow.find((r) => r.path === 'nodes.<name>.agent')).toMatchObject({ required: true, type: 'string (not empty)' });
    expect(flow.find((r) => r.path === 'nodes.<name>.needs')).toMatchObject({ required: false, default: '[]', type: 'list of string' });
  });
});
