'use client';
// The login form (DESIGN: The dashboard, "Accounts, roles and tokens").
import { useActionState } from 'react';
import { signInAction } from '@/lib/actions/auth';
import type { SignInState } from '@/lib/forms/auth';

export function SignInForm({ next }: { next: string }) {
  const [state, formAction, pending] = useActionState(signInAction, {} as SignInState);
  return (
    <form action={formAction} className="auth-form" data-testid="sign-in-form">
      <input type="hidden" name="next" value={next} />
      <label htmlFor="sign-in-name">Name</label>
      <input id="sign-in-name" name="name" autoComplete="username" autoCapitalize="none" spellCheck={false} required autoFocus />
      <label htmlFor="sign-in-password">Password</label>
      <input id="sign-in-password" name="password" type="password" autoComplete="current-password" required />
      {state.error ? (
        <p className="field-error" role="alert" data-testid="sign-in-error">
          {state.error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </div>
    </form>
  );
}
