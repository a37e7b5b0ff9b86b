// What `npm run docs:generate` writes is what the code says now, and the JSON Schemas an editor
// uses agree with `aqven check`: every showcase and template file passes its schema, and a bad file
// fails it at the field `aqven check` names.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { checkProject } from '@/lib/project';
import { projectJsonSchema, schemaFileFor, type JsonSchemaFile } from '@/lib/project/json-schemas';
import { generatedFiles } from '@/scripts/generate-references';
import { writeProject } from '../helpers/fixture-project';
import { ROOT } from '../cli/aqven-process';

const KEY = { OPENROUTER_API_KEY: 'sk-test' };

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<JsonSchemaFile, ReturnType<typeof ajv.compile>>();
function validate(file: JsonSchemaFile, value: unknown) {
  let v = validators.get(file);
  if (!v) validators.set(file, (v = ajv.compile(projectJsonSchema(file))));
  v(value);
  return v.errors ?? [];
}

/** the fields a schema's errors point at, as `aqven check`'s paths ("output.retries"; an unknown or a missing key by its own name) */
function schemaPaths(errors: ReturnType<typeof validate>): string[] {
  return errors.map((e) => {
    const at = e.instancePath.split('/').slice(1);
    if (e.keyword === 'additionalProperties') at.push(String((e.params as { additionalProperty: string }).additionalProperty));
    if (e.keyword === 'required') at.push(String((e.params as { missingProperty: string }).missingProperty));
    return at.join('.');
  });
}

function projectFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !/\.ya?ml$/.test(e.name) || e.parentPath.includes('.aqven')) continue;
    out.push(relative(dir, join(e.parentPath, e.name)));
  }
  return out.sort();
}

const generated = await generatedFiles();

describe('generated files', () => {
  it.each(Object.keys(generated))('%s is as the code writes it (else: npm run docs:generate)', (path) => {
    expect(readFileSync(join(ROOT, path), 'utf8')).toBe(generated[path]);
  });
});

describe('the JSON Schemas of the project files', () => {
  const projects = ['showcase', 'templates/showcase', 'templates/blank'];
  it.each(projects)('every file of %s passes its schema', (project) => {
    const dir = join(ROOT, project);
    const files = projectFiles(dir);
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) {
      const schema = schemaFileFor(f);
      expect(schema, f).not.toBeNull();
      expect({ f, errors: validate(schema!, parse(readFileSync(join(dir, f), 'utf8'))) }).toEqual({ f, errors: [] });
    }
  });

  const agent = (body: string) => `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\n${body}`;
  const bad: { name: string; file: string; text: string }[] = [
    { name: 'retries out of range', file: 'agents/bad.yaml', text: agent('output:\n  retries: 11\n') },
    { name: 'an outcome policy that is none of the three', file: 'agents/bad.yaml', text: agent('output:\n  on_refusal: "skip"\n') },
    { name: 'a misspelt key', file: 'agents/bad.yaml', text: agent('temprature: 0.3\n') },
    { name: 'a model string without its provider', file: 'agents/bad.yaml', text: 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "gpt-4o"\n' },
    { name: 'a temperature above 2', file: 'agents/bad.yaml', text: agent('settings:\n  temperature: 3\n') },
    {
      name: 'a provider with no tries',
      file: 'providers/local.yaml',
      text: 'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "local"\napi: "openai"\nbase_url: "http://localhost:1/v1"\ntransport:\n  max_attempts: 0\n',
    },
    {
      name: 'a duration that is not one',
      file: 'providers/local.yaml',
      text: 'apiVersion: "aqven/v1"\nkind: "Provider"\nname: "local"\napi: "openai"\nbase_url: "http://localhost:1/v1"\ntransport:\n  timeout: "soon"\n',
    },
    { name: 'a node without its prompt', file: 'flows/bad.yaml', text: 'apiVersion: "aqven/v1"\nkind: "Flow"\nnodes:\n  a:\n    agent: "assistant"\n' },
    {
      name: 'an alert threshold above 1, and a webhook URL written in the file',
      file: 'aqven.yaml',
      text: 'apiVersion: "aqven/v1"\nkind: "Project"\nalerts:\n  webhook: { url: "https://hooks.example.com/x" }\n  rules: { failure_share: { threshold: 2 } }\n',
    },
  ];
  it.each(bad)('$name: the schema fails at the field aqven check names', async ({ file, text }) => {
    const dir = await writeProject({ [file]: text });
    const named = (await checkProject(dir, { env: KEY })).filter((d) => d.file === file && d.severity === 'error').map((d) => d.path.join('.'));
    expect(named.length).toBeGreaterThan(0);
    const paths = schemaPaths(validate(schemaFileFor(file)!, parse(text)));
    for (const field of named) expect(paths, `aqven check names ${field}`).toContain(field);
  });
});
