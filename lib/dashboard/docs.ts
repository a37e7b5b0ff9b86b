// The user docs inside the dashboard (DESIGN: The dashboard, "Docs"): which pages of docs/ it shows
// and in what order, GitHub's heading anchors, and the rewriting of the pages' markdown tree (hast,
// after remark-rehype) so that heading ids, the table of contents and the links between pages work
// at /docs/<page> as they do on GitHub. Pure: the files are read by lib/server/docs.ts.
import remarkGfm from 'remark-gfm';

/**
 * The pages /docs shows, in the README's docs index order, then the references it does not list. A
 * page name is only ever looked up in this list, never used as a path. Left out on purpose: the
 * builders' documents (BUILDERS_DOCS).
 */
export const DOC_PAGES = [
  'getting-started',
  'what-happens-when-a-model-is-called',
  'what-this-is-built-on',
  'agent-specification',
  'how-to-check-your-model-providers-are-configured',
  'how-to-call-a-model',
  'how-to-find-a-models-real-structural-limits',
  'how-to-debug-a-failed-node-as-a-team',
  'how-to-share-the-dashboard',
  'how-to-run-on-postgresql',
  'monitoring',
  'project-files',
  'project-file-reference',
  'cli',
  'cli-reference',
  'run-record',
  'run-record-fields',
  'errors',
  'limits',
  'client',
  'dashboard',
  'access',
  'run-history',
] as const;

export type DocPage = (typeof DOC_PAGES)[number];

/** The builders' documents in docs/, not shown at /docs (docs/DESIGN.md is their index). */
export const BUILDERS_DOCS = ['DESIGN', 'WIRE', 'measurements'] as const;

/** `name` when it is one of the pages (an exact, case-sensitive match: never a path), else null. */
export function docPage(name: string): DocPage | null {
  return (DOC_PAGES as readonly string[]).includes(name) ? (name as DocPage) : null;
}

/** A page's address in the dashboard. */
export const docHref = (page: DocPage, anchor?: string) => `/docs/${page}${anchor ? `#${anchor}` : ''}`;

/** GitHub's heading anchor: lower case, punctuation and symbols dropped, each space a hyphen. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Anchors for the headings of one page, in order: a repeated one gets -1, -2, … as on GitHub. */
export function slugger(): (heading: string) => string {
  const seen = new Map<string, number>();
  return (heading) => {
    const base = githubSlug(heading);
    let slug = base;
    let n = seen.get(base) ?? 0;
    while (seen.has(slug)) slug = `${base}-${++n}`;
    seen.set(base, n);
    seen.set(slug, 0);
    return slug;
  };
}

/** A heading that is an error code (`## E_FIELD`, `## invalid_output`): also reachable by the code as written. */
const CODE_HEADING = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The codes docs/errors.md has a page section for: its `## CODE` headings (fenced code skipped). */
export function errorCodes(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/^## +(\S+?) *$/gm)].map((m) => m[1]!).filter((c) => CODE_HEADING.test(c));
}

/** The dashboard's link to an error code's reference, or null when docs/errors.md has no section for it. */
export function errorDocHref(code: string | null | undefined, codes: readonly string[]): string | null {
  return code && codes.includes(code) ? docHref('errors', code) : null;
}

/**
 * Where a link of a docs page goes in the dashboard: another page (`how-to-call-a-model.md#the-model-string`
 * → `/docs/how-to-call-a-model#the-model-string`), an anchor of this page, or an address elsewhere
 * (kept); null for a file of the repository the dashboard does not show (DESIGN.md, a source file),
 * which is then shown as its text.
 */
export function docLinkTarget(href: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
  const [path, anchor] = href.split('#', 2) as [string, string | undefined];
  const m = /^(?:\.\/|docs\/)?([a-z0-9-]+)\.md$/.exec(path); // docs/…: a link of the README
  const page = m ? docPage(m[1]!) : null;
  return page ? docHref(page, anchor) : null;
}

/** The section of a markdown file under its `## heading` (up to the next `## `), or null. */
export function markdownSection(markdown: string, heading: string): string | null {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) return null;
  let end = start + 1;
  let fenced = false;
  for (; end < lines.length; end++) {
    if (/^```/.test(lines[end]!)) fenced = !fenced;
    else if (!fenced && /^## /.test(lines[end]!)) break;
  }
  return lines
    .slice(start + 1, end)
    .join('\n')
    .trim();
}

/** A page's title: its first `# ` heading, plain; on a page without one (the seed page is plain text), its first line. */
export function docTitle(markdown: string, fallback: string): string {
  const m = /^# +(.+)$/m.exec(markdown) ?? /^(?:\s*\n)*([^\n<#][^\n]{0,119})\n/.exec(markdown);
  return m ? plainText(m[1]!.trim()) : fallback;
}

/** A page written as plain text, not markdown (the seed page): no heading at all. Its line breaks are kept on the page. */
export function isPlainTextPage(markdown: string): boolean {
  return !/^#{1,6} /m.test(markdown.replace(/^```[\s\S]*?^```/gm, ''));
}

/** The label line a plain-text page puts above a block of code (the seed page's `YAML`), and the block's language. */
const PLAIN_CODE_LABELS = new Map([
  ['YAML', 'yaml'],
  ['JSON', 'json'],
  ['Shell', 'sh'],
  ['TypeScript', 'ts'],
]);

/**
 * A plain-text page as markdown, so its layout survives: a block under a label line (`YAML`, then a
 * blank line, then the lines up to the next blank one) becomes a code block of that language, its
 * indentation kept; lines whose cells are split by tabs become a table, the first line its head.
 * Everything else is left as it is (the page keeps its line breaks, `.doc-plain`), but a `<` is
 * escaped: markdown would read `<EMAIL>` as HTML, which the docs leave out.
 */
export function plainPageMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const lang = PLAIN_CODE_LABELS.get(lines[i]!.trim());
    if (lang !== undefined && lines[i + 1]?.trim() === '' && (lines[i + 2] ?? '').trim() !== '') {
      let end = i + 2;
      while (end < lines.length && lines[end]!.trim() !== '') end++;
      out.push('```' + lang, ...lines.slice(i + 2, end), '```');
      i = end - 1;
      continue;
    }
    if (lines[i]!.includes('\t')) {
      let end = i;
      while (end < lines.length && lines[end]!.includes('\t')) end++;
      const rows = lines.slice(i, end).map(
        (l) =>
          `| ${l
            .split('\t')
            .map((c) => c.trim().replace(/\|/g, '\\|'))
            .join(' | ')} |`,
      );
      const width = lines[i]!.split('\t').length;
      if (out.length > 0 && out[out.length - 1]!.trim() !== '') out.push('');
      out.push(rows[0]!, `|${' --- |'.repeat(width)}`, ...rows.slice(1));
      i = end - 1;
      continue;
    }
    // a `<` is text on a plain page (the seed page's `<EMAIL>` placeholder), never the start of HTML
    out.push(lines[i]!.replace(/</g, '\\<'));
  }
  return out.join('\n');
}

const plainText = (md: string) => md.replace(/`([^`]*)`/g, '$1').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');

// ---- the hast tree of a page (what remark-rehype makes and react-markdown renders) ----

export interface HastText {
  type: 'text';
  value: string;
}
export interface HastElement {
  type: 'element';
  tagName: string;
  properties: Record<string, unknown>;
  children: HastNode[];
}
export type HastNode = HastText | HastElement | { type: string; children?: HastNode[]; value?: string };
export interface HastRoot {
  type: 'root';
  children: HastNode[];
}

export interface TocEntry {
  depth: number;
  id: string;
  text: string;
}

const isElement = (n: HastNode): n is HastElement => n.type === 'element';
const el = (tagName: string, properties: Record<string, unknown>, children: HastNode[]): HastElement => ({ type: 'element', tagName, properties, children });
const text = (value: string): HastText => ({ type: 'text', value });

function textOf(n: HastNode): string {
  if (n.type === 'text') return (n as HastText).value;
  return ('children' in n ? (n.children ?? []) : []).map(textOf).join('');
}

/**
 * Rewrites a page's tree in place and answers its table of contents: every heading gets GitHub's
 * anchor as its id (a code heading also its code, as `/docs/errors#E_FIELD` asks) and a link to
 * itself; links to other pages point at /docs; a link to a file the dashboard does not show becomes
 * its text; a table scrolls inside a box of its own (a phone is narrower than most tables). The
 * contents (h2 and h3) are put after the page's title when there are at least `tocMin` of them.
 */
export function rewriteDocTree(tree: HastRoot, opts: { tocMin?: number } = {}): TocEntry[] {
  const slug = slugger();
  const toc: TocEntry[] = [];
  // a page without a `# ` title (the seed page is plain text): its first line, a paragraph of its own, is the title
  const first = tree.children.find(isElement);
  if (first && first.tagName === 'p' && !tree.children.some((n) => isElement(n) && n.tagName === 'h1') && !textOf(first).includes('\n')) first.tagName = 'h1';
  const visit = (parent: { children: HastNode[] }) => {
    parent.children = parent.children.map((n) => {
      if (!isElement(n)) return n;
      const level = /^h([1-6])$/.exec(n.tagName);
      if (level) {
        const words = textOf(n).trim();
        const id = slug(words);
        n.properties = { ...n.properties, id };
        const alias = CODE_HEADING.test(words) && words !== id ? [el('span', { id: words, className: ['anchor-alias'] }, [])] : [];
        visit(n);
        // the link to the section itself, for copying; out of the heading's accessible name
        n.children = [...alias, ...n.children, text(' '), el('a', { href: `#${id}`, className: ['heading-link'], ariaHidden: 'true', tabIndex: -1 }, [text('#')])];
        if (level[1] === '2' || level[1] === '3') toc.push({ depth: Number(level[1]), id, text: words });
        return n;
      }
      if (n.tagName === 'a' && typeof n.properties.href === 'string') {
        const target = docLinkTarget(n.properties.href);
        if (target === null) return el('span', { className: ['doc-offsite'], title: `${n.properties.href} (in the repository)` }, n.children);
        n.properties = { ...n.properties, href: target };
      }
      visit(n);
      if (n.tagName === 'table') return el('div', { className: ['doc-table'], tabIndex: 0, role: 'region', ariaLabel: 'table' }, [n]);
      return n;
    });
  };
  visit(tree);
  if (toc.length >= (opts.tocMin ?? 3)) {
    const nav = el('nav', { className: ['doc-toc'], ariaLabel: 'Contents', dataTestid: 'doc-toc' }, [
      el('p', { className: ['doc-toc-title'] }, [text('Contents')]),
      el(
        'ul',
        {},
        toc.map((t) => el('li', { className: [`toc-${t.depth}`] }, [el('a', { href: `#${t.id}` }, [text(t.text)])])),
      ),
    ]);
    const h1 = tree.children.findIndex((n) => isElement(n) && n.tagName === 'h1');
    tree.children.splice(h1 + 1, 0, nav);
  }
  return toc;
}

/** rewriteDocTree as a rehype plugin (react-markdown's rehypePlugins). */
export function rehypeDocTree(opts: { tocMin?: number } = {}) {
  return () => (tree: HastRoot) => {
    rewriteDocTree(tree, opts);
  };
}

/**
 * react-markdown's settings for a docs page: GitHub's markdown, the tree rewritten, and raw HTML left
 * out (the pages hold only comments such as `<!-- illustrative -->`, markers for their tests).
 */
export function docMarkdownOptions(opts: { tocMin?: number } = {}) {
  return { remarkPlugins: [remarkGfm], rehypePlugins: [rehypeDocTree(opts)], skipHtml: true };
}
