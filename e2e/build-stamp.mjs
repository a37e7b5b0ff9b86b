// Whether `.next` holds a production build of the sources as they are now, so the e2e servers build
// once per source state (serve.mjs). A build serve.mjs made is stamped with a hash of what
// `next build` reads — the checkout's files git tracks or would track, less those no page can import
// (specs, tests, benchmarks, markdown, the test runners' configs) — with the installed packages
// (node_modules/.package-lock.json) and the Node version, and with the build's BUILD_ID, so a build
// made any other way (npm run build, aqven serve, a build of other sources) never passes for it.
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

const NOT_BUILT_FROM = /^(e2e|test|bench|docs)\/|\.test\.tsx?$|\.md$|^(playwright|vitest)\.config\.ts$/;

/** The sources' hash, or null when git cannot list them (then every run builds). */
export function sourceHash(root) {
  const ls = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (ls.status !== 0) return null;
  const files = ls.stdout.split('\0').filter((f) => f !== '' && !NOT_BUILT_FROM.test(f));
  const hash = createHash('sha256').update(process.version);
  for (const f of [...new Set(files)].sort().concat('node_modules/.package-lock.json')) {
    const path = join(root, f);
    // a tracked file deleted from the work tree, or a folder or link listed as a file, counts as absent
    const isFile = statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
    hash.update(`\0${f}\0${isFile ? 'file' : 'absent'}\0`);
    if (isFile) hash.update(readFileSync(path));
  }
  return hash.digest('hex');
}

const stampFile = (root) => join(root, '.next', 'e2e-build-stamp.json');
const buildId = (root) => {
  try {
    return readFileSync(join(root, '.next', 'BUILD_ID'), 'utf8').trim();
  } catch {
    return null;
  }
};

/** True when `.next` is the build serve.mjs made from sources hashing to `hash`. */
export function isBuiltFrom(root, hash) {
  if (hash === null) return false;
  try {
    const stamp = JSON.parse(readFileSync(stampFile(root), 'utf8'));
    return stamp.hash === hash && stamp.buildId !== null && stamp.buildId === buildId(root);
  } catch {
    return false;
  }
}

/** Stamps the build just made with the hash of the sources it was started from. */
export function stampBuild(root, hash) {
  if (hash !== null) writeFileSync(stampFile(root), `${JSON.stringify({ hash, buildId: buildId(root) })}\n`);
}
