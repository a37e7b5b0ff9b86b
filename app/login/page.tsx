import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/auth/sign-in-form';
import { isLocalPath, loginPage } from '@/lib/server/access';

export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const next = typeof sp.next === 'string' && isLocalPath(sp.next) ? sp.next : '/runs';
  const state = await loginPage();
  if (state === 'signed-in') redirect(next);
  return (
    <section className="auth-page">
      <h1>Sign in</h1>
      {state === 'no-account-remote' ? (
        <p className="hint" role="alert" data-testid="no-account">
          No account exists yet, and this request is not known to come from the dashboard&apos;s own machine. On the server, create the first account:{' '}
          <code>aqven user add NAME --role admin</code>; or start the dashboard with <code>aqven serve</code> and open it on that machine.
        </p>
      ) : state === 'unavailable' ? (
        <p className="hint" role="alert">
          The dashboard cannot read its project or database right now; the server&apos;s log says why.
        </p>
      ) : (
        <SignInForm next={next} />
      )}
    </section>
  );
}
