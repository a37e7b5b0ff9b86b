// `${VAR}` and `${VAR:-default}` expansion for string values of aqven.yaml and providers/*.yaml
// (DESIGN: "Project files"). `$${` keeps a literal `${`.

export type Env = Record<string, string | undefined>;

export interface Expansion {
  value: string;
  /** variables that were unset (or empty) and had no default */
  missing: string[];
}

const REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandEnv(text: string, env: Env): Expansion {
  const missing: string[] = [];
  const value = text.replace(REF, (_whole, name: string | undefined, fallback: string | undefined) => {
    if (name === undefined) return '${';
    // own entries only: ${constructor} is an unset variable, not Object.prototype's
    const v = Object.hasOwn(env, name) ? env[name] : undefined;
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing };
}
