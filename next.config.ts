import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // a second build folder lets a developer preview with `next dev` while `.next` serves the tests
  ...(process.env.AQVEN_NEXT_DIST_DIR ? { distDir: process.env.AQVEN_NEXT_DIST_DIR } : {}),
  // the e2e servers' build (e2e/serve.mjs) skips Next.js's own type check: `npm run typecheck` is the
  // check, run by npm test before the browser tests; it is half of a build on this machine
  ...(process.env.AQVEN_NEXT_NO_TYPECHECK === '1' ? { typescript: { ignoreBuildErrors: true } } : {}),
  serverExternalPackages: ['better-sqlite3'],
  poweredByHeader: false,
  experimental: {
    // the same 1 MiB as DEFAULT_MAX_BODY_BYTES (lib/server/request-guard.ts); proxy.ts refuses a
    // larger declared Content-Length first, this caps a server action's body however it is sent
    serverActions: { bodySizeLimit: '1mb' },
    // a CI job's build starts from a fresh clone and its cache is thrown away with it: writing
    // Turbopack's build cache cost a third of the build's CPU (82 against 55 CPU s, measured 2026-12-03)
    turbopackFileSystemCacheForBuild: !process.env.CI,
  },
};

export default nextConfig;
