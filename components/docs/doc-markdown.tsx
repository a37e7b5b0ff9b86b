// A page of the user docs, rendered on the server (DESIGN: The dashboard, "Docs"): GitHub's markdown
// (tables, task lists, autolinks) through react-markdown, its tree rewritten by rehypeDocTree (heading
// anchors as GitHub makes them, the table of contents, links between pages pointing at /docs). Raw
// HTML in a page (its test markers, `<!-- illustrative -->`) is left out. A plain-text page (the seed
// page) is made markdown first, its code blocks and tables kept (plainPageMarkdown).
import Markdown from 'react-markdown';
import { docMarkdownOptions, isPlainTextPage, plainPageMarkdown } from '@/lib/dashboard/docs';

/** `bare`: the markdown alone, inside a page of its own (no article, no contents). */
export function DocMarkdown({ markdown, bare = false }: { markdown: string; bare?: boolean }) {
  const plain = isPlainTextPage(markdown);
  const md = <Markdown {...docMarkdownOptions({ tocMin: bare ? Infinity : 3 })}>{plain ? plainPageMarkdown(markdown) : markdown}</Markdown>;
  return bare ? (
    md
  ) : (
    <article className={plain ? 'doc-page doc-plain' : 'doc-page'} data-testid="doc-page">
      {md}
    </article>
  );
}
