import Link from 'next/link';
import { ApiReferenceView } from '@/components/docs/api-reference';
import { DocMarkdown } from '@/components/docs/doc-markdown';
import { DocsSide } from '@/components/docs/docs-side';
import { apiReference } from '@/lib/dashboard/api-reference';
import { markdownSection } from '@/lib/dashboard/docs';
import { docIndex, readmeMarkdown } from '@/lib/server/docs';
import { pageSession } from '@/lib/server/page-session';
import '@/app/styles/docs.css';

export const dynamic = 'force-dynamic';

/** The HTTP API's reference (DESIGN: The dashboard, "Docs"): the OpenAPI document the API serves, built at request time, and the README's curl examples. */
export default async function ApiDocsPage() {
  await pageSession();
  const api = apiReference();
  const examples = markdownSection(readmeMarkdown() ?? '', 'Calling AQVEN from a service');
  return (
    <div className="docs-layout">
      <DocsSide pages={docIndex()} current="api" />
      <article className="doc-page" data-testid="api-reference">
        <h1>The HTTP API</h1>
        <p>
          Every route of {api.title}&apos;s HTTP API (version {api.version}), from the OpenAPI document it serves at <a href="/api/openapi.json">/api/openapi.json</a>. A service
          calls it with an API token (<code>aqven token create NAME</code>) or through <Link href="/docs/client">the typed client</Link>; what a run record holds is in{' '}
          <Link href="/docs/run-record">the run record</Link>.
        </p>
        {examples ? (
          <section data-testid="api-examples">
            <h2 id="calling-aqven-from-a-service">Calling AQVEN from a service</h2>
            <DocMarkdown markdown={examples} bare />
          </section>
        ) : null}
        <h2 id="routes">Routes</h2>
        <ApiReferenceView api={api} />
      </article>
    </div>
  );
}
