// Validates real answers against GET /api/openapi.json's document: Ajv for JSON Schema 2020-12 (the
// dialect OpenAPI 3.1 uses) with the whole document added under one id, so an answer's schema and
// the components it refers to resolve as they stand in the document.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Doc = Record<string, unknown>;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function documentChecker(doc: Doc) {
  // strict off: the document's own keywords (openapi, paths, x-codes …) are not JSON Schema's
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(doc, 'openapi');
  const cache = new Map<string, ValidateFunction>();
  return {
    /** the operation of `method` `path` as the document has it, or undefined */
    operation(path: string, method: string): Doc | undefined {
      return ((doc.paths as Doc)[path] as Doc | undefined)?.[method] as Doc | undefined;
    },
    /** Ajv's errors of `body` against the answer `status` of `method` `path` (null: valid); throws when the document has no such answer */
    errors(path: string, method: string, status: number, body: unknown): string | null {
      const key = `${method} ${path} ${status}`;
      let v = cache.get(key);
      if (!v) {
        const answer = (this.operation(path, method)?.responses as Doc | undefined)?.[String(status)] as Doc | undefined;
        if (!answer) throw new Error(`the document has no answer ${status} for ${method.toUpperCase()} ${path}`);
        if (!answer.content) throw new Error(`${key} has no body in the document`);
        v = ajv.compile({ $ref: `openapi#/${pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema')}` });
        cache.set(key, v);
      }
      return v(body) ? null : ajv.errorsText(v.errors);
    },
  };
}
