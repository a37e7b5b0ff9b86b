// Shape checks for scripts, chaos profiles and latency coming from files or the control API.
// Each returns a list of "path: problem" strings; empty = valid.
import { CHAOS_FAULTS } from './chaos';

const KINDS = ['ok', 'invalid', 'truncated', 'refusal', 'provider_error', 'status', 'drop', 'stall', 'stream_error'];

const ENUMS: Record<string, Record<string, string[]>> = {
  invalid: { mode: ['missing_required', 'wrong_enum', 'not_json'] },
  refusal: { variant: ['refusal_field', 'content_filter', 'stop_reason', 'safety', 'prompt_blocked'] },
  provider_error: { variant: ['finish_error', 'choice_error', 'malformed_function_call', 'other'] },
  status: { variant: ['quota', 'html', 'retry_info'] },
  drop: { when: ['before', 'during_body', 'mid_stream'] },
};

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function validateLatency(v: unknown, path = 'latency'): string[] {
  if (v === undefined) return [];
  if (!isObj(v)) return [`${path}: must be an object {first_token_ms?, tokens_per_s?}`];
  const errs: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (k !== 'first_token_ms' && k !== 'tokens_per_s') errs.push(`${path}.${k}: unknown key`);
    else if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) errs.push(`${path}.${k}: must be a number >= 0`);
  }
  return errs;
}

export function validateScripts(v: unknown, path = 'scripts'): string[] {
  if (!isObj(v)) return [`${path}: must be a map of model id -> list of steps`];
  const errs: string[] = [];
  for (const [model, steps] of Object.entries(v)) {
    const p = `${path}[${JSON.stringify(model)}]`;
    if (!Array.isArray(steps) || steps.length === 0) {
      errs.push(`${p}: must be a non-empty list of steps`);
      continue;
    }
    steps.forEach((step, i) => {
      const sp = `${p}[${i}]`;
      if (!isObj(step)) return errs.push(`${sp}: must be an object with a kind`);
      if (typeof step.kind !== 'string' || !KINDS.includes(step.kind)) {
        return errs.push(`${sp}.kind: must be one of ${KINDS.join(', ')} (got ${JSON.stringify(step.kind)})`);
      }
      for (const [field, allowed] of Object.entries(ENUMS[step.kind] ?? {})) {
        if (step[field] !== undefined && !allowed.includes(step[field] as string)) {
          errs.push(`${sp}.${field}: must be one of ${allowed.join(', ')} (got ${JSON.stringify(step[field])})`);
        }
      }
      if (step.kind === 'status' && (!Number.isInteger(step.status) || (step.status as number) < 100 || (step.status as number) > 599)) {
        errs.push(`${sp}.status: must be an HTTP status 100..599`);
      }
      if (step.headers !== undefined && (!isObj(step.headers) || Object.values(step.headers).some((h) => typeof h !== 'string'))) {
        errs.push(`${sp}.headers: must be a map of header name -> string value`);
      }
      for (const f of ['text', 'message', 'retryDelay', 'finish_reason', 'native_finish_reason']) {
        if (step[f] !== undefined && typeof step[f] !== 'string') errs.push(`${sp}.${f}: must be a string`);
      }
      if (step.usage !== undefined) {
        if (!isObj(step.usage)) errs.push(`${sp}.usage: must be an object {input?, output?, thoughts?}`);
        else {
          for (const [k, x] of Object.entries(step.usage)) {
            if (!['input', 'output', 'thoughts'].includes(k)) errs.push(`${sp}.usage.${k}: unknown key`);
            else if (!Number.isInteger(x) || (x as number) < 0) errs.push(`${sp}.usage.${k}: must be an integer >= 0`);
          }
        }
      }
      errs.push(...validateLatency(step.latency, `${sp}.latency`));
      return undefined;
    });
  }
  return errs;
}

export function validateChaos(v: unknown, path = 'chaos'): string[] {
  if (v === undefined || v === null) return [];
  if (!isObj(v)) return [`${path}: must be an object of probabilities`];
  const errs: string[] = [];
  let sum = 0;
  for (const [k, x] of Object.entries(v)) {
    if (k === 'seed') {
      if (!Number.isInteger(x)) errs.push(`${path}.seed: must be an integer`);
    } else if (!(CHAOS_FAULTS as readonly string[]).includes(k)) {
      errs.push(`${path}.${k}: unknown fault (known: seed, ${CHAOS_FAULTS.join(', ')})`);
    } else if (typeof x !== 'number' || !(x >= 0 && x <= 1)) {
      errs.push(`${path}.${k}: must be a probability between 0 and 1`);
    } else sum += x;
  }
  if (sum > 1 + 1e-9) errs.push(`${path}: probabilities add up to ${Number(sum.toFixed(6))}, more than 1`);
  return errs;
}

export function assertValid(errs: string[], what: string): void {
  if (errs.length > 0) throw new Error(`invalid ${what}:\n  ${errs.join('\n  ')}`);
}

