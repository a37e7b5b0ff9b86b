// GET /api/openapi.json: the HTTP API described in OpenAPI 3.1, generated from the route registry
// the handlers answer through (lib/contracts/openapi.ts). Anyone may read it: it names routes and
// shapes, no data.
import { reply } from '@/lib/contracts/api-route';
import { OPENAPI } from '@/lib/contracts/api-routes';
import { openApiDocument } from '@/lib/contracts/openapi';

export const dynamic = 'force-static';

export function GET() {
  return reply(OPENAPI, 200, openApiDocument() as { openapi: string; info: { title: string; version: string }; paths: object }, { 'cache-control': 'no-cache' });
}
