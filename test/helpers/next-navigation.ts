// Stands in for `next/navigation` when a test calls a server page or action outside Next.js:
// `redirect` throws a Redirect naming where it sends the browser (as Next's does, it never returns),
// and `follow` turns that into a value the test can compare.
// Use: vi.mock('next/navigation', () => import('@/test/helpers/next-navigation')).

export class Redirect extends Error {
  constructor(readonly url: string) {
    super(`redirect to ${url}`);
  }
}

export function redirect(url: string): never {
  throw new Redirect(url);
}

export function notFound(): never {
  throw new Error('not found');
}

/** What a server page or action answered: its element or state, or where it sent the browser. */
export async function follow<T>(f: () => Promise<T>): Promise<T | { redirect: string }> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof Redirect) return { redirect: err.url };
    throw err;
  }
}
