// AQVEN_PROVIDER_HOSTS (DESIGN: Project files, providers/NAME.yaml): the deployment's optional
// allow-list of the hosts a provider request may go to. A pushed snapshot names its providers'
// base_url, and every worker sends the key there; with the list set, a host outside it is refused
// when the project is loaded (aqven check, a push, a snapshot a process moves to) and before every
// request leaves (one-try.ts). Unset or blank: any host, as before.

export const PROVIDER_HOSTS_ENV = 'AQVEN_PROVIDER_HOSTS';

export interface ProviderHosts {
  /** the entries as written (trimmed, lower case), for messages */
  entries: string[];
}

/** `example.com`, `127.0.0.1`, `::1`; or `*.example.com`: any host under it at any depth (not example.com itself). */
const HOST_ENTRY = /^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*$|^[0-9a-f:.]*:[0-9a-f:.]*$/;

/** A host as compared: lower case, no brackets around an IPv6 address, no trailing dot. */
function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

let parsed: { raw: string; hosts: ProviderHosts } | null = null;

/** The allow-list in `env` (default process.env), or null when AQVEN_PROVIDER_HOSTS is unset or blank. */
export function providerHosts(env: Record<string, string | undefined> = process.env): ProviderHosts | null {
  const raw = Object.hasOwn(env, PROVIDER_HOSTS_ENV) ? env[PROVIDER_HOSTS_ENV] : undefined;
  if (raw === undefined || raw.trim() === '') return null;
  if (parsed?.raw !== raw)
    parsed = {
      raw,
      hosts: {
        entries: raw
          .split(',')
          .map(normalHost)
          .filter((e) => e !== ''),
      },
    };
  return parsed.hosts;
}

/** Whether `host` (a URL's hostname) is on the list. An entry that is no host name (a URL, a port, `*`) matches nothing. */
export function hostAllowed(hosts: ProviderHosts, host: string): boolean {
  const h = normalHost(host);
  return hosts.entries.some((e) => HOST_ENTRY.test(e) && (e.startsWith('*.') ? h.endsWith(e.slice(1)) : h === e));
}

/** The host of `url` when the list refuses it, else null (an unparsable URL too: nothing can be sent to it). */
export function refusedHost(hosts: ProviderHosts | null, url: string): string | null {
  if (!hosts) return null;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return null;
  }
  return hostAllowed(hosts, host) ? null : normalHost(host);
}

/** The list as messages show it. */
export function describeHosts(hosts: ProviderHosts): string {
  return `${PROVIDER_HOSTS_ENV} (${hosts.entries.length ? hosts.entries.join(', ') : 'no host'})`;
}
