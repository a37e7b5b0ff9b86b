// The project's checks across files that need the agents' model strings and the providers together
// (load.ts gathers both): W_API_KEY, W_UNPRICED, E_PROVIDER_HOST; and the one of aqven.yaml that needs
// the environment: W_ALERT_WEBHOOK.
import type { ResolvedProvider } from '../engine/types';
import { priced } from '../engine/usage';
import { parseModelString } from '../engine/model-string';
import { describeHosts, providerHosts, refusedHost } from '../engine/provider-hosts';
import { own } from '../shared/own';
import { readWebhookUrl } from './alerts-schema';
import { statesItsCost } from './builtin-providers';
import type { Diagnostic } from './diagnostics';
import type { ProjectFile } from './schema';
import type { Env } from './env';
import { quote } from './limits';
import type { PathSegment, YamlSource } from './yaml-source';

export interface LoadedProviders {
  providers: Record<string, ResolvedProvider>;
  /** providers whose file exists but is invalid */
  broken: Set<string>;
  sources: Map<string, YamlSource>;
  diagnostics: Diagnostic[];
}

/** Where a provider is first named by a model string, and by which agents: for W_API_KEY. */
export type ProviderUse = Map<string, { src: YamlSource; path: PathSegment[]; agents: string[] }>;

/** Each model string of an agent's chain, where it is written: for W_UNPRICED. */
export interface ModelUse {
  src: YamlSource;
  path: PathSegment[];
  model: string;
  agent: string;
}

/** W_API_KEY: only for providers some agent actually calls, at the provider's api_key_env if a file sets it. */
export function apiKeyWarnings(used: ProviderUse, loaded: LoadedProviders, env: Env): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, use] of used) {
    const provider = own(loaded.providers, name);
    if (!provider?.apiKeyEnv) continue;
    const value = own(env, provider.apiKeyEnv);
    if (value !== undefined && value !== '') continue;
    const providerSrc = loaded.sources.get(name);
    const inFile = providerSrc?.nodeAt(['api_key_env']) ? providerSrc : undefined;
    out.push(
      (inFile ?? use.src).diagnosticAt(
        'W_API_KEY',
        inFile ? ['api_key_env'] : use.path,
        `${provider.apiKeyEnv} is not set: provider "${name}" (used by ${use.agents.map((a) => `agents/${a}`).join(', ')}) cannot be called`,
        `export ${provider.apiKeyEnv}=… before \`aqven run\`, or run with --simulate`,
      ),
    );
  }
  return out;
}

/**
 * W_UNPRICED (DESIGN: "The provider's own cost first"): a model the catalogue does not price, on a
 * provider that states no cost with its replies — its cost would be unknown, never $0.
 */
export function unpricedWarnings(models: readonly ModelUse[], loaded: LoadedProviders): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const use of models) {
    const ref = parseModelString(use.model);
    const provider = ref ? own(loaded.providers, ref.provider) : undefined;
    if (!ref || !provider || statesItsCost(provider) || priced(own(provider.models, ref.modelId))) continue;
    out.push(
      use.src.diagnosticAt(
        'W_UNPRICED',
        use.path,
        `"${quote(use.model)}" has no price in the catalogue and provider "${ref.provider}" states no cost: its attempts' cost will be unknown, not $0`,
        `add "${quote(ref.modelId)}": { input_per_mtok: …, output_per_mtok: … } under models: in providers/${ref.provider}.yaml`,
      ),
    );
  }
  return out;
}

/**
 * E_PROVIDER_HOST: with AQVEN_PROVIDER_HOSTS set, a provider whose base_url is on another host —
 * every provider file that sets one, and each provider an agent calls at its built-in URL. The
 * engine refuses such a request anyway; the project is refused before it runs or is pushed.
 */
export function providerHostErrors(used: ProviderUse, loaded: LoadedProviders, env: Env): Diagnostic[] {
  const hosts = providerHosts(env);
  if (!hosts) return [];
  const out: Diagnostic[] = [];
  for (const [name, provider] of Object.entries(loaded.providers)) {
    const host = refusedHost(hosts, provider.baseUrl);
    if (host === null) continue;
    const src = loaded.sources.get(name);
    const inFile = src?.nodeAt(['base_url']) ? src : undefined;
    const use = used.get(name);
    const at = inFile ? { src: inFile, path: ['base_url'] } : use;
    // a built-in provider no agent calls sends nothing
    if (!at) continue;
    const whose = inFile ? `the base_url of ${inFile.file}` : `the built-in base_url of provider "${name}" (used by ${use!.agents.map((a) => `agents/${a}`).join(', ')})`;
    out.push(
      at.src.diagnosticAt(
        'E_PROVIDER_HOST',
        at.path,
        `${whose} is on host ${quote(host)}, which is not in ${describeHosts(hosts)}: no request may go there`,
        `add ${quote(host)} to AQVEN_PROVIDER_HOSTS, or point base_url at a listed host`,
      ),
    );
  }
  return out;
}

/** W_ALERT_WEBHOOK: `alerts:` is set but its webhook's variable is unset or not an http(s) URL here: no alert would be sent. */
export function alertWebhookWarnings(src: YamlSource, file: ProjectFile, env: Env): Diagnostic[] {
  if (!file.alerts) return [];
  const { url_env } = file.alerts.webhook;
  const read = readWebhookUrl(env, url_env);
  if (read.ok) return [];
  return [
    src.diagnosticAt(
      'W_ALERT_WEBHOOK',
      ['alerts', 'webhook', 'url_env'],
      `${read.problem}: no alert can be sent from here`,
      `export ${url_env}=https://… (the webhook's URL) in every process that runs flows (aqven run, serve, worker); \`aqven alerts test\` sends a sample`,
    ),
  ];
}
