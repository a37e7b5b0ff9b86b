// A page of the user docs, rendered on the server (DESIGN: The dashboard, "Docs"): GitHub's markdown
// (tables, task lists, autolinks) through react-markdown, its tree rewritten by rehypeDocTree (heading
// anchors as GitHub makes them, the table of contents, links between pages pointing at /docs). Raw
// HTML in a page is shown as text (no rehype-raw): the docs are ours, but nothing here needs it.
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { rehypeDocTree } from '@/lib/dashboard/docs';

/** `bare`: the markdown alone, inside a page of its own (no article, no contents). */
export function DocMarkdown({ markdown, bare = false }: { markdown: string; bare?: boolean }) {
  const md = (
    <Markdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeDocTree({ tocMin: bare ? Infinity : 3 })]}>
      {markdown}
    </Markdown>
  );
  return bare ? (
    md
  ) : (
    <article className="doc-page" data-testid="doc-page">
      {md}
    </article>
  );
}
