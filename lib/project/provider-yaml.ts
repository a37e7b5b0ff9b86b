// A provider file (DESIGN: Project files, providers/*.yaml): parsed and checked on its own, then
// resolved over its built-in base (load.ts reads the folder; this file reads one provider).
import type { ResolvedProvider } from '../engine/types';
import { builtInProviderBase, PROVIDER_DEFAULTS } from './builtin-providers';
import { capDiagnostics, type Diagnostic, hasErrors } from './diagnostics';
import type { Env } from './env';
import { fileStem, nameDiagnostic, parseFile } from './parse-file';
import { providerFileSchema, type ProviderFile } from './schema';
import type { YamlSource } from './yaml-source';

export interface LoadOptions {
  /** environment for `${VAR}` expansion, the W_API_KEY check and AQVEN_PROVIDER_HOSTS; default process.env */
  env?: Env;
}

export function parseProviderYaml(text: string, file: string, opts: LoadOptions = {}): { provider: ResolvedProvider | null; diagnostics: Diagnostic[] } {
  const { provider, diagnostics } = providerFromSource(text, file, opts);
  return { provider, diagnostics: capDiagnostics(diagnostics) };
}

/** One provider file: the provider (null when it has errors), its diagnostics and its parsed source. */
export function providerFromSource(text: string, file: string, opts: LoadOptions): { provider: ResolvedProvider | null; diagnostics: Diagnostic[]; src: YamlSource } {
  const { src, data, diagnostics } = parseFile(file, text, providerFileSchema, opts.env ?? process.env);
  diagnostics.push(...nameDiagnostic(src, 'provider'));
  if (!data) return { provider: null, diagnostics, src };
  const name = fileStem(file);
  if (data.name !== undefined && data.name !== name) {
    diagnostics.push(
      src.diagnosticAt(
        'E_FIELD',
        ['name'],
        `provider name "${data.name}" does not match the file name "${name}"`,
        `rename the file to providers/${data.name}.yaml or set name: "${name}"`,
      ),
    );
  }
  const base = builtInProviderBase(name);
  if (!base) {
    for (const key of ['api', 'base_url'] as const) {
      if (data[key] === undefined) {
        diagnostics.push(
          src.diagnosticAt(
            'E_FIELD',
            [key],
            `missing required key "${key}" (the provider "${name}" is not built in)`,
            key === 'api' ? 'add api: "openai", "anthropic" or "gemini" (the wire protocol)' : 'add base_url: "https://…" (the endpoint of the API)',
          ),
        );
      }
    }
  }
  if (hasErrors(diagnostics)) return { provider: null, diagnostics, src };
  return { provider: resolveProvider(name, data), diagnostics, src };
}

function resolveProvider(name: string, data: ProviderFile): ResolvedProvider {
  const base = builtInProviderBase(name);
  const models: ResolvedProvider['models'] = {};
  for (const [id, m] of Object.entries(data.models)) {
    models[id] = {
      ...(m.input_per_mtok !== undefined && { inputPerMtok: m.input_per_mtok }),
      ...(m.output_per_mtok !== undefined && { outputPerMtok: m.output_per_mtok }),
      ...(m.structured_outputs !== undefined && { structuredOutputs: m.structured_outputs }),
    };
  }
  const apiKeyEnv = data.api_key_env ?? base?.apiKeyEnv;
  return {
    name,
    api: (data.api ?? base?.api)!,
    baseUrl: (data.base_url ?? base?.baseUrl)!.replace(/\/+$/, ''),
    ...(apiKeyEnv !== undefined && { apiKeyEnv }),
    structuredOutputs: data.structured_outputs ?? base?.structuredOutputs ?? PROVIDER_DEFAULTS.structuredOutputs,
    transport: {
      maxAttempts: data.transport.max_attempts,
      budgetMs: data.transport.budget,
      timeoutMs: data.transport.timeout,
      idleTimeoutMs: data.transport.idle_timeout,
      tryDeadlineMs: data.transport.try_deadline,
      maxResponseBytes: data.transport.max_response_bytes,
      backoff: { baseMs: data.transport.backoff.base, factor: data.transport.backoff.factor, capMs: data.transport.backoff.cap, jitter: data.transport.backoff.jitter },
    },
    onRateLimit: { maxAttempts: data.on_rate_limit.max_attempts, defaultWaitMs: data.on_rate_limit.default_wait, maxWaitMs: data.on_rate_limit.max_wait },
    maxConcurrency: data.max_concurrency,
    models,
  };
}
