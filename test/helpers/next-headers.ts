// Stands in for `next/headers` when a test calls a server action or a page's server code outside
// Next.js: the request is one from this machine (Host localhost), so with no account in the
// database the dashboard is open, as for the demo (DESIGN: The dashboard, "Accounts, roles and
// tokens"). Use: vi.mock('next/headers', () => import('@/test/helpers/next-headers')).

export const LOCAL_HEADERS = { host: 'localhost' } as const;

export async function headers(): Promise<Headers> {
  return new Headers(LOCAL_HEADERS);
}
