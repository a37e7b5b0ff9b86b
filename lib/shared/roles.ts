// The three roles (DESIGN: The dashboard, "Accounts, roles and tokens"), each allowing what the one
// before it does and more: viewer browses; editor also starts runs and changes policies; admin also
// manages users and tokens.

export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `has` may do what `needs` may. */
export function roleAllows(has: Role, needs: Role): boolean {
  return ROLES.indexOf(has) >= ROLES.indexOf(needs);
}
