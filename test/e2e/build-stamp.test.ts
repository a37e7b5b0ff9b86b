// The e2e servers' build is made once per source state (e2e/serve.mjs, e2e/build-stamp.mjs): a stamped
// build is reused until a file `next build` reads changes, appears or goes, or `.next` is rebuilt by
// something else; a spec, a test or a markdown file changing does not call for a build.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBuiltFrom, sourceHash, stampBuild } from '../../e2e/build-stamp.mjs';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout with a page, a spec, a test and a README, all committed, and a build of them. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'aqven-stamp-'));
  roots.push(root);
  const write = (f: string, text: string) => {
    mkdirSync(join(root, f, '..'), { recursive: true });
    writeFileSync(join(root, f), text);
  };
  write('.gitignore', '.next/\nnode_modules/\n');
  write('app/page.tsx', 'export default function Page() { return null; }\n');
  write('e2e/smoke.spec.ts', '// a spec\n');
  write('test/x/a.test.ts', '// a test\n');
  write('lib/a.test.ts', '// a unit test\n');
  write('README.md', '# read me\n');
  write('node_modules/.package-lock.json', '{"packages":{}}\n');
  const git = (...args: string[]) => expect(spawnSync('git', args, { cwd: root, encoding: 'utf8' }).status).toBe(0);
  git('init', '-q');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'sources');
  write('.next/BUILD_ID', 'build-1\n');
  return root;
}

const fresh = (root: string) => isBuiltFrom(root, sourceHash(root));

describe('the e2e build stamp', () => {
  it('takes a stamped build as made from the sources until a source changes, appears or goes', () => {
    const root = checkout();
    expect(fresh(root)).toBe(false); // built, but not by serve.mjs
    stampBuild(root, sourceHash(root));
    expect(fresh(root)).toBe(true);

    // no page can import these: no build for them
    writeFileSync(join(root, 'e2e/smoke.spec.ts'), '// a spec, edited\n');
    writeFileSync(join(root, 'test/x/a.test.ts'), '// a test, edited\n');
    writeFileSync(join(root, 'lib/a.test.ts'), '// a unit test, edited\n');
    writeFileSync(join(root, 'README.md'), '# read me again\n');
    writeFileSync(join(root, 'e2e/new.spec.ts'), '// a new spec\n');
    expect(fresh(root)).toBe(true);

    writeFileSync(join(root, 'app/page.tsx'), 'export default function Page() { return 1; }\n');
    expect(fresh(root)).toBe(false);
    stampBuild(root, sourceHash(root));
    expect(fresh(root)).toBe(true);

    writeFileSync(join(root, 'app/other.tsx'), 'export const x = 1;\n'); // new, untracked: still read by the build
    expect(fresh(root)).toBe(false);
    stampBuild(root, sourceHash(root));
    rmSync(join(root, 'app/page.tsx')); // a route gone
    expect(fresh(root)).toBe(false);
    stampBuild(root, sourceHash(root));

    writeFileSync(join(root, 'node_modules/.package-lock.json'), '{"packages":{"next":{}}}\n'); // another install
    expect(fresh(root)).toBe(false);
  });

  it('never takes a build made some other way, or no build, for a stamped one', () => {
    const root = checkout();
    stampBuild(root, sourceHash(root));
    writeFileSync(join(root, '.next/BUILD_ID'), 'build-2\n'); // `next build` run by hand since
    expect(fresh(root)).toBe(false);
    rmSync(join(root, '.next'), { recursive: true });
    expect(fresh(root)).toBe(false);
  });

  it('builds every time where git cannot list the sources', () => {
    const root = mkdtempSync(join(tmpdir(), 'aqven-stamp-nogit-'));
    roots.push(root);
    mkdirSync(join(root, '.next'));
    writeFileSync(join(root, '.next/BUILD_ID'), 'build-1\n');
    expect(sourceHash(root)).toBeNull();
    stampBuild(root, sourceHash(root));
    expect(fresh(root)).toBe(false);
  });
});
