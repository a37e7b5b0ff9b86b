// The HTTP API's reference page (/docs/api; DESIGN: The dashboard, "Docs") as a view of the OpenAPI
// document the API serves (lib/contracts/openapi.ts, built from the route registry at request time),
// so the page cannot drift from the routes. Pure.
import { openApiDocument } from '@/lib/contracts/openapi';

type Json = Record<string, unknown>;

/** A schema as shown: a named component (linked) or inline JSON Schema. */
export type SchemaView = { ref: string } | { json: string };

export interface ApiOperation {
  id: string;
  method: string;
  path: string;
  summary: string;
  /** who may call it, in words */
  access: string;
  params: { name: string; in: string; required: boolean; type: string; description: string }[];
  body: SchemaView | null;
  responses: { status: string; description: string; headers: { name: string; description: string }[]; content: { mediaType: string; schema: SchemaView | null }[] }[];
}

export interface ApiReference {
  title: string;
  version: string;
  description: string;
  operations: ApiOperation[];
  components: { name: string; json: string }[];
}

const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A component's anchor on the page. */
export const schemaAnchor = (name: string) => `schema-${name}`;

function schemaView(schema: unknown): SchemaView | null {
  const s = obj(schema);
  if (!Object.keys(s).length) return null;
  const ref = /^#\/components\/schemas\/(.+)$/.exec(str(s.$ref));
  return ref ? { ref: ref[1]! } : { json: JSON.stringify(s, null, 2) };
}

function typeOf(schema: unknown): string {
  const s = obj(schema);
  if (Array.isArray(s.enum)) return s.enum.map((e) => JSON.stringify(e)).join(' | ');
  if (Array.isArray(s.anyOf)) return s.anyOf.map(typeOf).join(' | ');
  if (typeof s.type === 'string') return s.format ? `${s.type} (${str(s.format)})` : s.type;
  if (Array.isArray(s.type)) return s.type.join(' | ');
  return JSON.stringify(s);
}

function accessOf(op: Json): string {
  const role = str(op['x-aqven-role']);
  if (role) return `signed in (the dashboard's session) or an API token (Authorization: Bearer), role ${role} or above`;
  const access = str(op['x-aqven-access']);
  if (access) return access;
  return Array.isArray(op.security) && op.security.length === 0 ? 'anyone: no credential' : 'see the security schemes';
}

/** The reference of `doc` (the API's own document unless told). */
export function apiReference(doc: Json = openApiDocument()): ApiReference {
  const info = obj(doc.info);
  const operations: ApiOperation[] = [];
  for (const [path, methods] of Object.entries(obj(doc.paths))) {
    for (const [method, raw] of Object.entries(obj(methods))) {
      const op = obj(raw);
      operations.push({
        id: str(op.operationId) || `${method}-${path}`,
        method: method.toUpperCase(),
        path,
        summary: str(op.summary),
        access: accessOf(op),
        params: (Array.isArray(op.parameters) ? op.parameters : []).map((p) => {
          const q = obj(p);
          return { name: str(q.name), in: str(q.in), required: q.required === true, type: typeOf(q.schema), description: str(q.description) || str(obj(q.schema).description) };
        }),
        body: schemaView(obj(obj(obj(op.requestBody).content)['application/json']).schema),
        responses: Object.entries(obj(op.responses)).map(([status, r]) => {
          const a = obj(r);
          return {
            status,
            description: str(a.description),
            headers: Object.entries(obj(a.headers)).map(([name, h]) => ({ name, description: str(obj(h).description) })),
            content: Object.entries(obj(a.content)).map(([mediaType, c]) => ({ mediaType, schema: schemaView(obj(c).schema) })),
          };
        }),
      });
    }
  }
  return {
    title: str(info.title),
    version: str(info.version),
    description: str(info.description),
    operations,
    components: Object.entries(obj(obj(doc.components).schemas)).map(([name, s]) => ({ name, json: JSON.stringify(s, null, 2) })),
  };
}
