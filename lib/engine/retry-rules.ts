// Which failed HTTP replies are worth another try (DESIGN: Transport retry and rate limits): one
// rule per `if`, in the order they apply, like openai-node's shouldRetry; a reply that is not
// retried carries the words that say why.
import type { TryError } from './types';

export type StatusVerdict =
  | { transient: true; error: TryError }
  | {
      transient: false;
      error: TryError;
      /** appended to the try's message, e.g. "a client error: not retried" */
      whyNot: string;
    };

/** The kind of failure a status is, as stored on the try. */
export function tryErrorOf(status: number): TryError {
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500 || status === 409) return 'server_error';
  return 'client_error';
}

/** Whether a non-2xx reply is transient. `quota`: the adapter read a quota or spend limit in the body. */
export function classifyStatus(status: number, shouldRetry: string | null, quota: boolean): StatusVerdict {
  const error = tryErrorOf(status);
  const retry: StatusVerdict = { transient: true, error };
  const noRetry = (whyNot: string): StatusVerdict => ({ transient: false, error, whyNot });
  const header = shouldRetry?.trim().toLowerCase();

  // a redirect is never followed (the key headers would go along), nor resent: no header changes that
  if (status >= 300 && status < 400) return noRetry('a redirect: not followed, set base_url to the final URL');
  // the server's own word overrides every rule below, a quota included
  if (header === 'true') return retry;
  if (header === 'false') return noRetry('x-should-retry: false: the server said not to retry');
  // a quota or spend limit arrives as a 429, but waiting will not clear it
  if (quota) return noRetry('a quota or spend limit: waiting will not clear it, not retried');
  // a request timeout or a lock conflict
  if (status === 408 || status === 409) return retry;
  // a rate limit: its wait is served at the rate-limit gate
  if (status === 429) return retry;
  // server errors and overloads that clear by themselves (529: Anthropic's "overloaded")
  if (status === 500 || status === 502 || status === 503 || status === 504 || status === 529) return retry;
  // any other 4xx is about the request itself: sending it again cannot help
  if (status >= 400 && status < 500) return noRetry('a client error: not retried');
  // a 5xx outside the list (501 Not Implemented, …) will not change either
  return noRetry(`HTTP ${status} is not a transient failure: not retried`);
}

/**
 * An error event inside a 200 stream that carries a status (OpenAI-style `error.code: 429`, Gemini
 * `error.code: 503`, or the status an Anthropic error type stands for): the kind of try failure it
 * is when that status is transient — a rate limit, an overload, a server error: the call never
 * really completed — or null when it is not (the event reports a broken answer: outcome `error`).
 */
export function transientEventError(status: number, quota: boolean): Exclude<TryError, null | 'client_error' | 'connection' | 'cut_off'> | null {
  const v = classifyStatus(status, null, quota);
  if (!v.transient) return null;
  return v.error === 'rate_limited' || v.error === 'timeout' ? v.error : 'server_error';
}
