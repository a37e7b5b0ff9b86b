// `${VAR}` and `${VAR:-default}` expansion for string values of aqven.yaml and providers/*.yaml
// (DESIGN: Project files). `$${` keeps a literal `${`.
//
// A project file may come from a pushed snapshot, which every worker and the dashboard load with
// their own environment: it reads only the variables named for it (DESIGN: Project files, "Which
// environment variables a project file may read"), never the deployment's own secrets.

export type Env = Record<string, string | undefined>;

export interface Expansion {
  value: string;
  /** variables that were unset (or empty) and had no default */
  missing: string[];
  /** variables whose names project files may not read: never looked up, expanded to '' */
  refused: string[];
}

const REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** What `${VAR}` may name: endpoints and folders, never a key (a key in a URL or a reply would be shown and stored). */
export const EXPAND_ENV_SUFFIXES = ['_BASE_URL', '_HOST', '_PORT', '_DIR'] as const;
/** What `api_key_env` may name. */
export const API_KEY_ENV_SUFFIXES = ['_API_KEY', '_API_TOKEN'] as const;
/** What `alerts.webhook.url_env` may name: a webhook's URL, a secret of its own (Slack's holds its token). */
export const WEBHOOK_ENV_SUFFIXES = ['_WEBHOOK_URL', '_WEBHOOK'] as const;

/** Names no project file reads, whatever their suffix: AQVEN's own settings and the database's. */
const DENIED = /^(AQVEN_|PG)|^DATABASE_URL$/;
const UPPER_NAME = /^[A-Z][A-Z0-9_]*$/;

export type EnvUse = 'expand' | 'api_key_env' | 'url_env';

const SUFFIXES: Record<EnvUse, readonly string[]> = { expand: EXPAND_ENV_SUFFIXES, api_key_env: API_KEY_ENV_SUFFIXES, url_env: WEBHOOK_ENV_SUFFIXES };

const or = (words: readonly string[]) => `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;

/** The allowed pattern in words, for messages and hints. */
export function envPattern(use: EnvUse): string {
  const suffixes = SUFFIXES[use];
  return `upper-case names ending in ${or(suffixes)}, never AQVEN_*, DATABASE_URL or PG*`;
}

/** Whether a project file may read the variable `name` for `use`. */
export function envNameAllowed(name: string, use: EnvUse): boolean {
  const suffixes = SUFFIXES[use];
  return UPPER_NAME.test(name) && !DENIED.test(name) && suffixes.some((s) => name.length > s.length && name.endsWith(s));
}

export function expandEnv(text: string, env: Env): Expansion {
  const missing: string[] = [];
  const refused: string[] = [];
  const value = text.replace(REF, (_whole, name: string | undefined, fallback: string | undefined) => {
    if (name === undefined) return '${';
    // refused names are not read at all, not even for their default
    if (!envNameAllowed(name, 'expand')) {
      refused.push(name);
      return '';
    }
    // own entries only: ${constructor} is an unset variable, not Object.prototype's
    const v = Object.hasOwn(env, name) ? env[name] : undefined;
    if (v !== undefined && v !== '') return v;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing, refused };
}
