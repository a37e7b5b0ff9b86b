'use client';
// Change one's own password (DESIGN: The dashboard, "Accounts, roles and tokens"). Other sessions
// of the user are signed out; this one stays.
import { useActionState } from 'react';
import { changePasswordAction } from '@/lib/actions/auth';
import type { PasswordState } from '@/lib/forms/auth';

const FIELDS = [
  { name: 'current', label: 'Current password', autoComplete: 'current-password' },
  { name: 'next', label: 'New password (at least 12 characters)', autoComplete: 'new-password' },
  { name: 'repeat', label: 'New password again', autoComplete: 'new-password' },
] as const;

export function PasswordForm() {
  const [state, formAction, pending] = useActionState(changePasswordAction, {} as PasswordState);
  return (
    <form action={formAction} className="auth-form" data-testid="password-form">
      {FIELDS.map((f) => (
        <div key={f.name} className="auth-field">
          <label htmlFor={`pw-${f.name}`}>{f.label}</label>
          <input
            id={`pw-${f.name}`}
            name={f.name}
            type="password"
            autoComplete={f.autoComplete}
            required
            aria-invalid={state.field === f.name ? true : undefined}
            aria-describedby={state.field === f.name ? 'pw-error' : undefined}
          />
        </div>
      ))}
      {state.error ? (
        <p className="field-error" id="pw-error" role="alert">
          {state.error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" disabled={pending}>
          {pending ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}
