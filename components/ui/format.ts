// Number and time formats shared by every dashboard page: dense, fixed units, no locale surprises
// (server and browser must print the same text).
import { shortRunId } from '@/lib/shared/short-id';

export function fmtMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return m < 60 ? `${m} m ${s} s` : `${Math.floor(m / 60)} h ${m % 60} m`;
}

export function fmtTokens(n: number | null | undefined): string {
  if (n == null) return '—';
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** USD as every page writes it: one rule with the replay messages (lib/shared/cost-text.ts) */
export { fmtCost } from '@/lib/shared/cost-text';

/** the run id as shown: one rule with the CLI and the API (lib/shared/short-id.ts) */
export const shortId = shortRunId;

/** "openrouter:google/gemini-2.5-flash-lite" → provider and model id, for two-tone display. */
export function splitModel(model: string): { provider: string; id: string } {
  const i = model.indexOf(':');
  return i > 0 ? { provider: model.slice(0, i), id: model.slice(i + 1) } : { provider: '', id: model };
}

export function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** JSON on one line when it is short (dense pages), indented when it is not. */
export function compactJson(value: unknown, max = 240): string {
  if (typeof value === 'string') return value;
  const one = JSON.stringify(value) ?? 'null';
  return one.length <= max ? one : pretty(value);
}
