import { PasswordForm } from '@/components/auth/password-form';
import { ProjectProblem } from '@/components/ui/project-problem';
import { callerSpendToday } from '@/db/spend-queries';
import { fmtBudget, fmtUsd } from '@/lib/shared/spend-budget';
import { pageSession } from '@/lib/server/page-session';
import { SESSION_TTL_S } from '@/lib/server/auth';

export const dynamic = 'force-dynamic';

export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const changed = (await searchParams).changed === '1';
  const s = await pageSession('viewer');
  if (!s.ok)
    return (
      <section>
        <h1>Account</h1>
        <ProjectProblem {...s} />
      </section>
    );
  const { caller } = s;
  if (caller.kind !== 'user') {
    return (
      <section>
        <h1>Account</h1>
        <p className="hint">
          No account exists yet: the dashboard is open to this machine only. Create the first one with <code>aqven user add NAME --role admin</code>; from then on every page asks
          for a login.
        </p>
      </section>
    );
  }
  // what the runs they started spent today (UTC), against the daily budget an admin set (DESIGN: "Spend budgets")
  const spend = await callerSpendToday(s.session.db, caller.author!, Date.now());
  return (
    <section className="auth-page">
      <h1>Account</h1>
      <dl className="account-facts">
        <dt>Name</dt>
        <dd data-testid="account-name">{caller.name}</dd>
        <dt>Role</dt>
        <dd data-testid="account-role">{caller.role}</dd>
        <dt>Session</dt>
        <dd>ends after {SESSION_TTL_S / 86400} days without use, or when you sign out</dd>
        <dt>Spent today</dt>
        <dd data-testid="account-spend" data-budget={spend.budgetUsd ?? undefined}>
          {spend.budgetUsd === null
            ? `${fmtUsd(spend.spentUsd)}; no daily budget`
            : `${fmtUsd(spend.spentUsd)} of your ${fmtBudget(spend.budgetUsd)} budget; it resets at 00:00 UTC`}
        </dd>
      </dl>
      <h2>Change password</h2>
      {changed ? (
        <p className="hint" role="status" data-testid="password-changed">
          Password changed. Your other sessions were signed out.
        </p>
      ) : null}
      <PasswordForm />
    </section>
  );
}
