// Who may read GET /metrics (DESIGN: Observability, "Metrics"; The dashboard, "Accounts, roles and
// tokens"): a request from this machine — a loopback peer the server saw itself (`aqven serve`'s
// signed stamp, the worker's own socket), never a Host header — or one bearing a token made with
// `aqven token create NAME --scope metrics`. A token made for the /api routes does not read it, and
// a metrics token reads nothing else (lib/server/access.ts). The one rule for both doors: the
// dashboard's route (lib/server/metrics-route.ts) and the worker's server (metrics-server.ts).
import { tokenCaller } from '@/db/account-queries';
import type { Db } from '@/db/types';
import { AUTH_CODE, UNAVAILABLE_CODE } from '@/lib/contracts/api-route';

/** what a refused scrape is told: no token, or one that is not a metrics token */
export const METRICS_AUTH =
  'GET /metrics is read from this machine, or with a token made by `aqven token create NAME --scope metrics` (Authorization: Bearer …); this request has neither (a token made for the /api routes does not read /metrics)';
/** what a scrape is told when the tokens cannot be read (its detail goes to the process's log) */
export const METRICS_UNAVAILABLE = 'the run database cannot be read, so the token cannot be checked; try again shortly';

/** A refusal as the API words it (`{error, code}`, lib/server/api-refusal.ts), with its status. */
export interface MetricsRefusal {
  status: 401 | 503;
  code: typeof AUTH_CODE | typeof UNAVAILABLE_CODE;
  message: string;
  /** 401: the scheme to answer in WWW-Authenticate */
  authenticate?: 'Bearer';
  /** 503: seconds before trying again */
  retryAfterS?: number;
  /** 503: why the tokens could not be read, for the process's log only (it may name hosts) */
  cause?: unknown;
}

export type MetricsAccess = { ok: true } | ({ ok: false } & MetricsRefusal);

/** The refusal as a JSON body and headers, for a door without Next.js (the worker's server). */
export function refusalAnswer(r: MetricsRefusal): { body: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (r.authenticate) headers['www-authenticate'] = r.authenticate;
  if (r.retryAfterS !== undefined) headers['retry-after'] = String(r.retryAfterS);
  return { body: JSON.stringify({ error: r.message, code: r.code }), headers };
}

export interface MetricsRequest {
  /** the request comes from this machine, as the server itself saw its peer */
  local: boolean;
  /** the Authorization header, or null */
  authorization: string | null;
  /** the client's address when known (a use of an expired token is audited with it) */
  address: string | null;
  now: number;
}

/** Whether `req` may read the metrics; a token is looked up only when the request is not local. */
export async function metricsAccess(db: Db, req: MetricsRequest): Promise<MetricsAccess> {
  if (req.local) return { ok: true };
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.authorization ?? '')?.[1];
  if (bearer) {
    try {
      const token = await tokenCaller(db, bearer, req.now, req.address);
      if (token?.scope === 'metrics') return { ok: true };
    } catch (cause) {
      return { ok: false, status: 503, code: UNAVAILABLE_CODE, message: METRICS_UNAVAILABLE, retryAfterS: 5, cause };
    }
  }
  return { ok: false, status: 401, code: AUTH_CODE, message: METRICS_AUTH, authenticate: 'Bearer' };
}
