// The user docs the dashboard shows at /docs (DESIGN: The dashboard, "Docs"), read from the AQVEN
// checkout's docs/ folder at request time, so a page is never older than its file. The checkout is
// AQVEN_ROOT (`aqven serve` sets it to the checkout it serves from), else the working directory (a
// plain `next start` in the checkout). Which files may be read is lib/dashboard/docs.ts's list: a
// page name is looked up there, never joined into a path as given.
import 'server-only';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DOC_PAGES, docPage, docTitle, errorCodes, type DocPage } from '@/lib/dashboard/docs';

/** The checkout the dashboard serves from. */
export function checkoutRoot(env: Record<string, string | undefined> = process.env): string {
  return env.AQVEN_ROOT || process.cwd();
}

const docFile = (page: DocPage) => join(/*turbopackIgnore: true*/ checkoutRoot(), 'docs', `${page}.md`);

function readIfThere(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** A page's markdown, or null: not one of the pages, or its file is missing. */
export function readDocPage(name: string): { page: DocPage; markdown: string } | null {
  const page = docPage(name);
  const markdown = page ? readIfThere(docFile(page)) : null;
  return page && markdown !== null ? { page, markdown } : null;
}

/** The index of /docs: every page whose file is there, with its title, in the list's order. */
export function docIndex(): { page: DocPage; title: string }[] {
  return DOC_PAGES.flatMap((page) => {
    const markdown = readIfThere(docFile(page));
    return markdown === null ? [] : [{ page, title: docTitle(markdown, page) }];
  });
}

/** The README's section of that heading (the curl examples of "Calling AQVEN from a service"), or null. */
export function readmeMarkdown(): string | null {
  return readIfThere(join(/*turbopackIgnore: true*/ checkoutRoot(), 'README.md'));
}

let errorPages: { file: string; mtimeMs: number; codes: string[] } | null = null;

/** The codes docs/errors.md has a section for (its headings, parsed again only when the file changed). */
export function errorPageCodes(): string[] {
  const file = docFile('errors');
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  if (errorPages?.file !== file || errorPages.mtimeMs !== mtimeMs) errorPages = { file, mtimeMs, codes: errorCodes(readIfThere(file) ?? '') };
  return errorPages.codes;
}
