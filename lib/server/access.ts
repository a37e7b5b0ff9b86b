// Who may do what (DESIGN: The dashboard, "Accounts, roles and tokens"): the one home of the role
// check. Every page, route handler and server action asks here before it reads or changes
// anything. While no user exists the dashboard is open, to requests from this machine only (the
// demo); once one exists, every request needs a session (a browser) or an API token (a service).
import 'server-only';
import { headers as requestHeaders } from 'next/headers';
import { cache } from 'react';
import { redirect } from 'next/navigation';
import { NextResponse } from 'next/server';
import { anyUser, tokenCaller } from '@/db/account-queries';
import { pgReason } from '@/db/pg';
import { StorageError } from '@/db/storage-error';
import type { Db } from '@/db/types';
import { ProjectInvalidError } from '@/lib/flow/session';
import { isLoopback } from '@/lib/shared/loopback';
import { requestPeer, stampedPeer, type Peer } from '@/lib/shared/peer';
import { roleAllows, type Role } from '@/lib/shared/roles';
import { AUTH_CODE, FORBIDDEN_CODE, UNAVAILABLE_CODE } from '@/lib/contracts/api-route';
import { sessionUser } from './auth';
import { PATH_HEADER, guardSettings, parseHost, requestHost } from './request-guard';
import { serverSession } from './session';

export type { Role };

/** Who is asking: a signed-in user, a service's API token, or anyone (no account exists yet, this machine only). */
export interface Caller {
  kind: 'open' | 'user' | 'token';
  /** what authorship records: the user's name, `token:<name>`, or null when the dashboard is open */
  author: string | null;
  /** the user's or token's name, for the page header; null when open */
  name: string | null;
  role: Role;
  /** the signed-in session (kind 'user') */
  sessionId?: string;
}

const OPEN: Caller = { kind: 'open', author: null, name: null, role: 'admin' };

/**
 * Why nobody is let in: no session (`sign-in`); an `Authorization: Bearer` the dashboard does not
 * know — unknown, revoked or expired (`bad-token`) — or sent where tokens are not accepted, a page
 * or a form (`token-not-here`); a token made for GET /metrics only (`metrics-token`, `aqven token
 * create --scope metrics`); no account exists and the request is not known to come from this
 * machine (`no-account-remote`).
 */
export type Unknown = { why: 'sign-in' | 'bad-token' | 'token-not-here' | 'metrics-token' | 'no-account-remote' };

type Env = Readonly<Record<string, string | undefined>>;

/** Where the request comes from: the verified `aqven serve` stamp, or a trusted proxy's X-Forwarded-For (lib/shared/peer.ts). */
export function peerOf(h: Headers, env: Env = process.env): Peer {
  return requestPeer(stampedPeer(h), guardSettings(env).trustProxy);
}

/** The client's address when it can be trusted (peerOf), else null: nothing the client wrote is believed. */
export function peerAddress(h: Headers, env: Env = process.env): string | null {
  const p = peerOf(h, env);
  return p.known ? p.address : null;
}

/**
 * Whether the request comes from this machine: its Host is loopback (so a page elsewhere cannot
 * drive it by rebinding a name) and its peer is KNOWN to be loopback. An unknown peer — plain
 * `next start`, a proxy's header without AQVEN_TRUST_PROXY — is never this machine.
 */
export function fromThisMachine(h: Headers, env: Env = process.env): boolean {
  const s = guardSettings(env);
  const { raw, proto } = requestHost({ method: 'GET', pathname: '/', proto: 'http', headers: h }, s);
  const host = raw ? parseHost(raw, proto) : null;
  if (!host || !isLoopback(host.hostname)) return false;
  const peer = peerOf(h, env);
  return peer.known && peer.loopback;
}

/**
 * The caller behind a request's headers, or why there is none. API tokens (`Authorization: Bearer`)
 * are accepted by route handlers only (`tokens: true`): a page or a server action that receives one
 * refuses it, so a leaked service token cannot drive the forms.
 */
export async function callerOf(db: Db, h: Headers, opts: { tokens?: boolean; now?: number } = {}): Promise<Caller | Unknown> {
  const now = opts.now ?? Date.now();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(h.get('authorization') ?? '')?.[1];
  if (bearer) {
    if (!opts.tokens) return { why: 'token-not-here' };
    const token = await tokenCaller(db, bearer, now, peerAddress(h));
    if (token?.scope === 'metrics') return { why: 'metrics-token' };
    return token ? { kind: 'token', author: `token:${token.name}`, name: token.name, role: token.role } : { why: 'bad-token' };
  }
  if (!(await anyUser(db))) return fromThisMachine(h) ? OPEN : { why: 'no-account-remote' };
  const user = await sessionUser(db, h);
  return user ? { kind: 'user', author: user.name, name: user.name, role: user.role, sessionId: user.sessionId } : { why: 'sign-in' };
}

/** The login page, asked to come back to the page requested (a path of this dashboard only). */
export function loginUrl(h: Headers): string {
  const path = h.get(PATH_HEADER);
  return path && isLocalPath(path) && path !== '/' ? `/login?next=${encodeURIComponent(path)}` : '/login';
}

/** A path of this dashboard, never another site (`//host`, `/\\host`) nor the login page itself. */
export function isLocalPath(p: string): boolean {
  return /^\/(?![/\\])[^\s]*$/.test(p) && !p.startsWith('/login');
}

function isCaller(c: Caller | Unknown): c is Caller {
  return 'role' in c;
}

/** Why a request cannot be served at all: the run database's own words (a StorageError names it), else node-postgres's reason. */
function unavailableText(err: unknown): string {
  if (err instanceof StorageError || err instanceof ProjectInvalidError) return err.message;
  return `the run database cannot be read: ${pgReason((err as { cause?: unknown }).cause ?? err)}`;
}

/** What a caller gets while no account exists and the request is not known to come from this machine. */
export const NO_ACCOUNT_REMOTE =
  'no account exists yet, and this request is not known to come from this machine: on the server, create the first account (aqven user add NAME --role admin), or serve the dashboard with aqven serve and open it there';

/** A generic unavailability, for a caller who cannot be told where the database or project lives. */
export const UNAVAILABLE = 'the dashboard cannot serve requests right now (its database or project cannot be read); the server log says why';

/** Why the request cannot be served, as this caller may read it: the detail on this machine, else generic; the detail is logged. */
export function unavailableFor(h: Headers, err: unknown): string {
  const detail = unavailableText(err);
  console.error(`aqven: ${detail}`);
  return fromThisMachine(h) ? detail : UNAVAILABLE;
}

/** What a refusal says. */
function refusalText(c: Caller | Unknown, role: Role): string {
  if (isCaller(c)) return `your role (${c.role}) may not do this: it needs ${role}`;
  if (c.why === 'bad-token') return 'the API token is not valid: unknown, revoked or expired (aqven token list shows yours)';
  if (c.why === 'token-not-here') return 'API tokens are accepted by the /api routes only: sign in to use the dashboard';
  if (c.why === 'metrics-token') return 'this token reads GET /metrics only (aqven token create --scope metrics): the /api routes need a token made without --scope';
  return c.why === 'no-account-remote' ? NO_ACCOUNT_REMOTE : 'sign in first';
}

/**
 * A page's caller with at least `role`. Nobody signed in: to the login page. Signed in without
 * the role: to the runs (every user may view them).
 */
/**
 * The caller of the request being served, looked up once per request: the layout's menu and the
 * page both ask (React's `cache` is per server request; outside one it simply calls through).
 */
const requestCaller = cache(async (): Promise<Caller | Unknown> => callerOf((await serverSession()).db, await requestHeaders()));

export async function pageCaller(role: Role = 'viewer'): Promise<Caller> {
  const c = await requestCaller();
  if (!isCaller(c)) redirect(loginUrl(await requestHeaders()));
  if (!roleAllows(c.role, role)) redirect('/runs');
  return c;
}

/** The caller of the request a server component renders, or null (nobody, or the project cannot be opened). */
export async function viewer(): Promise<Caller | null> {
  try {
    const c = await requestCaller();
    return isCaller(c) ? c : null;
  } catch {
    return fromThisMachine(await requestHeaders()) ? OPEN : null; // the page itself shows the project's problem
  }
}

/** What the login page shows: the form, or why not (already in, no account yet and not this machine, no database). */
export async function loginPage(): Promise<'form' | 'signed-in' | 'no-account-remote' | 'unavailable'> {
  let c: Caller | Unknown;
  try {
    c = await requestCaller();
  } catch {
    return 'unavailable';
  }
  if (isCaller(c)) return 'signed-in';
  return c.why === 'no-account-remote' ? 'no-account-remote' : 'form';
}

/** The caller of a server action with at least `role`, or why they may not act. */
export async function actionCaller(role: Role): Promise<{ ok: true; caller: Caller } | { ok: false; error: string }> {
  const c = await requestCaller();
  if (isCaller(c) && roleAllows(c.role, role)) return { ok: true, caller: c };
  return { ok: false, error: refusalText(c, role) };
}

/** Why the caller of a server action may not act as an editor, or null when they may. */
export async function editorRefusal(): Promise<string | null> {
  const r = await actionCaller('editor');
  return r.ok ? null : r.error;
}

/** The caller of a route handler with at least `role`, or the JSON response refusing them: 401 unknown (E_AUTH), 403 without the role (E_FORBIDDEN), 503 unreadable (E_UNAVAILABLE): CALLER_ANSWERS of every registered route. */
export async function routeCaller(req: Request, role: Role): Promise<Caller | NextResponse> {
  let c: Caller | Unknown;
  try {
    c = await callerOf((await serverSession()).db, req.headers, { tokens: true });
  } catch (err) {
    // who is asking cannot be read: the database is down or refuses us — a 503, never an empty 500;
    // its words name hosts and paths, so only this machine reads them (and the server log)
    return NextResponse.json({ error: unavailableFor(req.headers, err), code: UNAVAILABLE_CODE }, { status: 503, headers: { 'retry-after': '5' } });
  }
  if (isCaller(c) && roleAllows(c.role, role)) return c;
  const status = isCaller(c) ? 403 : 401;
  const code = status === 403 ? FORBIDDEN_CODE : AUTH_CODE;
  return NextResponse.json({ error: refusalText(c, role), code }, { status, headers: status === 401 ? { 'www-authenticate': 'Bearer' } : undefined });
}
