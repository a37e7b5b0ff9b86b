// The sign-in and password forms' states (DESIGN: The dashboard, "Accounts, roles and tokens").

export interface SignInState {
  error?: string;
}

export interface PasswordState {
  error?: string;
  /** the field the error is about */
  field?: 'current' | 'next' | 'repeat';
}
