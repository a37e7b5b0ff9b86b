import { notFound } from 'next/navigation';
import { DocMarkdown } from '@/components/docs/doc-markdown';
import { DocsSide } from '@/components/docs/docs-side';
import { pageSession } from '@/lib/server/page-session';
import { docIndex, readDocPage } from '@/lib/server/docs';
import '@/app/styles/docs.css';

export const dynamic = 'force-dynamic';

/** One page of the user docs, docs/<page>.md rendered (DESIGN: The dashboard, "Docs"); a name not in the list is a 404. */
export default async function DocPage({ params }: { params: Promise<{ page: string }> }) {
  const { page } = await params;
  await pageSession();
  const doc = readDocPage(page);
  if (!doc) notFound();
  return (
    <div className="docs-layout">
      <DocsSide pages={docIndex()} current={doc.page} />
      <DocMarkdown markdown={doc.markdown} />
    </div>
  );
}
