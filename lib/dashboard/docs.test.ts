import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import Markdown from 'react-markdown';
import { describe, expect, it } from 'vitest';
import {
  BUILDERS_DOCS,
  DOC_PAGES,
  docLinkTarget,
  docTitle,
  docPage,
  errorCodes,
  errorDocHref,
  githubSlug,
  markdownSection,
  docMarkdownOptions,
  isPlainTextPage,
  plainPageMarkdown,
  slugger,
} from './docs';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** a page as /docs/<page> renders it (components/docs/doc-markdown.tsx's pipeline) */
const render = (markdown: string) => renderToStaticMarkup(createElement(Markdown, docMarkdownOptions(), markdown));
const ids = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!));

describe('the pages /docs shows', () => {
  it('are every page of docs/ but the builders’ documents, each once', () => {
    const files = readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => f.slice(0, -3));
    expect(new Set(DOC_PAGES).size).toBe(DOC_PAGES.length);
    expect([...DOC_PAGES, ...BUILDERS_DOCS].sort()).toEqual(files.sort());
  });

  it('are in the README’s docs index order', () => {
    const readme = read('README.md');
    const index = readme.slice(readme.indexOf('**Documentation.**'), readme.indexOf('## Two commands'));
    const order = [...index.matchAll(/\]\(docs\/([a-z0-9-]+)\.md\)/g)].map((m) => m[1]!);
    expect(DOC_PAGES.filter((p) => order.includes(p))).toEqual(order);
  });

  it('a page name is looked up, never used as a path', () => {
    expect(docPage('errors')).toBe('errors');
    for (const name of [
      '',
      '..',
      '../README',
      'errors/../DESIGN',
      'DESIGN',
      'WIRE',
      'measurements',
      'Errors',
      'errors.md',
      'errors/',
      '%2e%2e',
      '/etc/passwd',
      'constructor',
      'toString',
    ])
      expect(docPage(name), name).toBeNull();
  });
});

describe('GitHub’s heading anchors', () => {
  it('lower case, punctuation dropped, spaces as hyphens', () => {
    expect(githubSlug('The `aqven` command, step by step')).toBe('the-aqven-command-step-by-step');
    expect(githubSlug('10. Storage (db/, drizzle/)')).toBe('10-storage-db-drizzle');
    expect(githubSlug('providers/NAME.yaml')).toBe('providersnameyaml');
    expect(githubSlug('E_FIELD')).toBe('e_field');
    expect(githubSlug('What’s a run — and its record?')).toBe('whats-a-run--and-its-record');
  });

  it('a repeated heading gets -1, -2 as on GitHub', () => {
    const slug = slugger();
    expect(['Example', 'Example', 'Example-1', 'Example'].map(slug)).toEqual(['example', 'example-1', 'example-1-1', 'example-2']);
  });
});

describe('links between pages', () => {
  it('a page’s .md link goes to its /docs page; anchors and addresses elsewhere are kept', () => {
    expect(docLinkTarget('how-to-call-a-model.md#the-model-string')).toBe('/docs/how-to-call-a-model#the-model-string');
    expect(docLinkTarget('./errors.md')).toBe('/docs/errors');
    expect(docLinkTarget('docs/client.md')).toBe('/docs/client');
    expect(docLinkTarget('#alerts')).toBe('#alerts');
    expect(docLinkTarget('https://example.com/x.md')).toBe('https://example.com/x.md');
    expect(docLinkTarget('/runs')).toBe('/runs');
  });

  it('a file the dashboard does not show has no link', () => {
    for (const href of [
      'DESIGN.md#10-storage-db-drizzle',
      'WIRE.md#a-runs-events',
      'measurements.md',
      '../README.md#calling-aqven-from-a-service',
      '../lib/sim/README.md',
      '../showcase/agents/writer.yaml',
      '../errors.md',
    ])
      expect(docLinkTarget(href), href).toBeNull();
  });
});

describe('a rendered page', () => {
  const html = render(
    [
      '# Title',
      '',
      'See [the model string](how-to-call-a-model.md#the-model-string), [design](DESIGN.md).',
      '',
      '## One `code`',
      '',
      '## E_FIELD',
      '',
      '### Sub',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
    ].join('\n'),
  );

  it('gives each heading GitHub’s anchor, and a code heading its code too', () => {
    expect(html).toContain('<h2 id="one-code">');
    expect(html).toContain('<h2 id="e_field"><span id="E_FIELD" class="anchor-alias"></span>E_FIELD');
    expect(html).toContain('<h3 id="sub">');
  });

  it('lists the h2 and h3 headings as its contents after the title', () => {
    expect(html).toMatch(/<\/h1><nav class="doc-toc" aria-label="Contents"[^>]*>.*href="#one-code">One code<.*href="#e_field">E_FIELD<.*href="#sub">Sub</);
  });

  it('points its links at /docs, and shows a link to a file not shown as text', () => {
    expect(html).toContain('<a href="/docs/how-to-call-a-model#the-model-string">the model string</a>');
    expect(html).toContain('<span class="doc-offsite" title="DESIGN.md (in the repository)">design</span>');
  });

  it('leaves out the markers for the docs’ tests (HTML comments)', () => {
    const out = render('# T\n\n<!-- illustrative -->\n\n```sh\nnpx aqven check\n```\n');
    expect(out).not.toContain('illustrative');
    expect(out).toContain('npx aqven check');
  });

  it('scrolls a table in a box of its own', () => {
    expect(html).toMatch(/<div class="doc-table"[^>]*><table>/);
  });

  it('every link between the real pages lands on a heading of the page it names', () => {
    const rendered = new Map(DOC_PAGES.map((p) => [p, render(read(`docs/${p}.md`))]));
    const broken: string[] = [];
    for (const [page, out] of rendered) {
      for (const [, href] of out.matchAll(/<a href="\/docs\/([^"]+)"/g)) {
        const [target, anchor] = href!.split('#') as [string, string | undefined];
        const to = rendered.get(docPage(target)!);
        if (!to) broken.push(`${page}: /docs/${href}: no such page`);
        else if (anchor && !ids(to).has(anchor)) broken.push(`${page}: /docs/${href}: no such anchor`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('error codes', () => {
  it('are the ## CODE headings of the error reference, outside code blocks', () => {
    expect(errorCodes('# What aqven check reports\n\n## E_FIELD\n\n```md\n## E_NOT\n```\n\n## invalid_output\n\n## Not a code\n')).toEqual(['E_FIELD', 'invalid_output']);
    expect(errorCodes(read('docs/errors.md'))).toContain('E_FIELD');
  });

  it('a code with a section links to it; one without has no link', () => {
    const codes = errorCodes(read('docs/errors.md'));
    expect(errorDocHref('E_FIELD', codes)).toBe('/docs/errors#E_FIELD');
    expect(errorDocHref('E_NO_SUCH_CODE', codes)).toBeNull();
    expect(errorDocHref(null, codes)).toBeNull();
    // the anchor is on the rendered page
    expect(ids(render(read('docs/errors.md')))).toContain('E_FIELD');
  });
});

describe('a page’s title', () => {
  it('is its # heading, or else its first line', () => {
    expect(docTitle('# The `aqven` command\n\ntext\n', 'cli')).toBe('The aqven command');
    expect(docTitle('What happens when a model is called\n\nIn short\n', 'x')).toBe('What happens when a model is called');
    expect(docTitle('', 'x')).toBe('x');
    expect(render('Plain title\n\nA paragraph.\n')).toMatch(/^<h1 id="plain-title">Plain title/);
    expect(render('# Title\n\nA paragraph.\n')).toContain('<p>A paragraph.</p>');
  });
});

describe('a plain-text page', () => {
  it('is one without any heading (the seed page); a markdown page is not', () => {
    expect(isPlainTextPage(read('docs/what-happens-when-a-model-is-called.md'))).toBe(true);
    expect(isPlainTextPage(read('docs/getting-started.md'))).toBe(false);
    expect(isPlainTextPage('Title\n\n```md\n# not a heading\n```\n')).toBe(true);
  });

  it('keeps its layout: a block under a YAML label is a code block with its indentation, tab-split lines a table', () => {
    const html = render(plainPageMarkdown(read('docs/what-happens-when-a-model-is-called.md')));
    expect(html).toContain(
      '<code class="language-yaml">apiVersion: &quot;aqven/v1&quot;\nkind: &quot;Agent&quot;\nmodel: &quot;openrouter:openai/gpt-oss-20b&quot;\noutput:\n  strict: false\n  retries: 4\n</code>',
    );
    expect(html).toContain('  on_error: &quot;fallback&quot;');
    expect(html).not.toMatch(/<p>YAML<\/p>/);
    expect(html).toContain('the stored record has that address replaced with &lt;EMAIL&gt; — the rest');
    expect(html).toMatch(/<th>Field<\/th>\s*<th>Outcome<\/th>\s*<th>Default<\/th>/);
    expect(html).toMatch(/<td>on_refusal<\/td>\s*<td>refusal<\/td>\s*<td>fail<\/td>/);
    // a label with no block under it, and a word that names no language, stay text
    expect(plainPageMarkdown('YAML\n\n\nconstructor\n\nmore')).toBe('YAML\n\n\nconstructor\n\nmore');
  });
});

describe('markdownSection', () => {
  it('is the text under a ## heading, up to the next one (a ## in a code block is no heading)', () => {
    const md = '# T\n\n## A\n\none\n\n```sh\n## not a heading\n```\n\n## B\n\ntwo\n';
    expect(markdownSection(md, 'A')).toBe('one\n\n```sh\n## not a heading\n```');
    expect(markdownSection(md, 'C')).toBeNull();
    expect(markdownSection(read('README.md'), 'Calling AQVEN from a service')).toContain('curl -s http://127.0.0.1:3000/api/runs');
  });
});
