// The user docs cannot drift from the product: every link and anchor between the pages resolves,
// every YAML example passes `aqven check` in a scratch copy of the showcase, and every `npx aqven`
// command of a `sh` block runs, in order, in a scratch folder holding a copy of the showcase, and exits 0 — unless the block is marked
// `<!-- illustrative -->` (or `<!-- checked by FILE -->`, tested there) on the line before it.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { slugger } from '@/lib/dashboard/docs';
import { aqvenHere, ROOT } from '../cli/aqven-process';
import { copyShowcase } from '../helpers/showcase';

/** the pages written for the user of the seed page (DESIGN stays the builders' document) */
const PAGES = [
  'README.md',
  'docs/what-happens-when-a-model-is-called.md',
  'docs/what-this-is-built-on.md',
  'docs/agent-specification.md',
  'docs/how-to-check-your-model-providers-are-configured.md',
  'docs/how-to-call-a-model.md',
  'docs/getting-started.md',
  'docs/how-to-debug-a-failed-node-as-a-team.md',
  'docs/how-to-share-the-dashboard.md',
  'docs/how-to-run-on-postgresql.md',
];

/** the references (the generated ones among them: npm run docs:generate) and the guides that link to them: their links and anchors are checked */
const REFERENCES = ['docs/errors.md', 'docs/cli-reference.md', 'docs/run-record-fields.md', 'docs/cli.md', 'docs/run-record.md'];

interface Block {
  lang: string;
  body: string;
  line: number;
  illustrative: boolean;
}

function blocks(text: string): Block[] {
  const out: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ lang: open[1]!, body: body.join('\n'), line: start + 1, illustrative: /^<!-- (illustrative|checked by .+) -->$/.test(lines[start - 1]?.trim() ?? '') });
  }
  return out;
}

/** a page's heading anchors, as GitHub and the dashboard's /docs make them (a repeated heading gets -1, -2, …) */
function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const slug = slugger();
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.trim())));
}

/** the words of a command line, single and double quotes as a shell reads them */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** the relative links of `page` that name no file, or an anchor the file has no heading for */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  const prose = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const file = path ? resolve(dirname(join(ROOT, page)), path) : join(ROOT, page);
    if (!existsSync(file)) broken.push(`${target}: no such file`);
    else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${target}: no heading with that anchor`);
  }
  return broken;
}

describe.each(REFERENCES)('%s', (page) => {
  it('every relative link names a file that exists, and an anchor it has', () => {
    expect(brokenLinks(page)).toEqual([]);
  });
});

describe.each(PAGES)('%s', (page) => {
  const text = readFileSync(join(ROOT, page), 'utf8');

  it('every relative link names a file that exists, and an anchor it has', () => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('every YAML example passes aqven check in a copy of the showcase', async () => {
    const examples = blocks(text).filter((b) => b.lang === 'yaml' && !b.illustrative);
    for (const b of examples) {
      const doc = parse(b.body) as { kind?: string; name?: string };
      const folder = { Agent: 'agents', Flow: 'flows', Provider: 'providers' }[doc.kind ?? ''];
      expect(folder, `${page}:${b.line}: a YAML example that is no agent, flow or provider file must be marked <!-- illustrative -->`).toBeDefined();
      const dir = copyShowcase();
      writeFileSync(join(dir, folder!, `${doc.kind === 'Provider' ? doc.name : 'doc-example'}.yaml`), b.body);
      const res = await aqvenHere(['check', '--project', dir, '--json']);
      const errors = (JSON.parse(res.out) as { severity: string; code: string; message: string }[]).filter((d) => d.severity === 'error');
      expect(errors, `${page}:${b.line}`).toEqual([]);
    }
  });

  it('every aqven command of a sh block runs, in order, in a folder holding a copy of the showcase, and exits 0', async () => {
    const commands = blocks(text)
      .filter((b) => b.lang === 'sh' && !b.illustrative)
      .flatMap((b) =>
        b.body
          .split('\n')
          .filter((l) => l.startsWith('npx aqven '))
          .map((l) => ({ line: b.line, args: words(l).slice(2) })),
      );
    const here = process.cwd();
    const folder = mkdtempSync(join(tmpdir(), 'aqven-docs-'));
    cpSync(copyShowcase(), join(folder, 'showcase'), { recursive: true });
    process.chdir(folder);
    try {
      for (const c of commands) {
        const res = await aqvenHere(c.args);
        expect({ at: `${page}:${c.line}`, code: res.code, err: res.code === 0 ? '' : res.err }).toEqual({ at: `${page}:${c.line}`, code: 0, err: '' });
      }
    } finally {
      process.chdir(here);
    }
  }, 120_000); // several runs of the CLI in this process: a few seconds on a quiet machine
});
