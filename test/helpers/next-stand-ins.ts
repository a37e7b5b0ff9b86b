// A setup file of the integration projects (vitest.config.ts, setupFiles; run before each test
// file): the parts of Next.js that the dashboard's server code imports, stood in for outside
// Next.js — the same stand-ins for every file. In the shared process (isolate: false) a module is
// loaded once and keeps the `next/headers` it got first, whichever file loaded it, so no file may
// bring its own: a test that asks as someone else sets `request.headers` (./next-headers.ts).
import { vi } from 'vitest';
import { resetRequestForTests } from './next-headers';

vi.mock('server-only', () => ({}));
vi.mock('next/headers', () => import('./next-headers'));
vi.mock('next/cache', () => ({ revalidatePath: () => {} }));
vi.mock('next/navigation', () => import('./next-navigation'));

resetRequestForTests();
