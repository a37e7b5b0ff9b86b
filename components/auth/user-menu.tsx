// Who is signed in, in the top bar, with the way out (DESIGN: The dashboard, "Accounts, roles and tokens").
import Link from 'next/link';
import { signOutAction } from '@/lib/actions/auth';

export function UserMenu({ name, role }: { name: string; role: string }) {
  return (
    <div className="user-menu" data-testid="user-menu">
      <Link href="/account" title={`Signed in as ${name} (${role})`}>
        {name} <span className="muted">· {role}</span>
      </Link>
      <form action={signOutAction}>
        <button type="submit" className="secondary small" data-testid="sign-out">
          Sign out
        </button>
      </form>
    </div>
  );
}
