// The dashboard's production build for the browser tests, made only when the sources changed since
// the last one this file made (build-stamp.mjs). serve.mjs calls it before it serves, and `npm test`
// (scripts/test.mjs) runs it as `node e2e/build.mjs` beside vitest, so Playwright finds it made.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isBuiltFrom, sourceHash, stampBuild } from './build-stamp.mjs';

/**
 * Builds `.next` unless it is already the build of these sources; resolves with the exit status
 * (0 when up to date). Next.js's own type check is skipped (AQVEN_NEXT_NO_TYPECHECK, next.config.ts):
 * `npm test` has run `tsc --noEmit` first.
 */
export function buildUnlessBuilt(root = process.cwd()) {
  const hash = sourceHash(root);
  if (isBuiltFrom(root, hash)) {
    console.log('e2e: .next is a build of these sources: not building again');
    return Promise.resolve(0);
  }
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', AQVEN_NEXT_NO_TYPECHECK: '1' };
  return new Promise((resolve) => {
    const b = spawn('npx', ['next', 'build'], { cwd: root, stdio: 'inherit', env });
    b.on('error', (err) => {
      console.error(`e2e: next build could not start: ${err.message}`);
      resolve(1);
    });
    b.on('close', (code, signal) => {
      if (code === 0) stampBuild(root, hash);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(await buildUnlessBuilt());
