import { timingSafeEqual } from 'node:crypto';
import { Elysia } from 'elysia';
import { hashKey, type KeyKind } from '../workspaces/api-keys';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import { decodeBody } from './json-body';
import { forbidden, notFound, unauthorized } from './problem';

/** What a route needs: `ingest` takes any key, `private` a private or admin key, `admin` an admin key. */
export type Scope = 'ingest' | 'private' | 'admin';

const ALLOWED: Record<Scope, readonly KeyKind[]> = {
  ingest: ['public', 'private', 'admin'],
  private: ['private', 'admin'],
  admin: ['admin'],
};

/** An `Authorization: Bearer <key>` header; the key is its group. */
export const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** The key of an `Authorization: Bearer <key>` header; 401 when missing or malformed. */
export function bearerKey(authorization: string | undefined): string {
  if (!authorization) throw unauthorized('an Authorization: Bearer <key> header is required', 'invalid_request');
  const match = BEARER.exec(authorization);
  if (!match) throw unauthorized('the Authorization header must be "Bearer <key>"', 'invalid_request');
  return match[1]!;
}

/** Hex digits of a key's SHA-256 that name it in records (an audit list) without revealing it. */
const KEY_ID_DIGITS = 12;

/** The SHA-256 (hex) of the key an authenticated caller's request carries. */
export function keyHashOf(request: Request): string {
  return hashKey(bearerKey(request.headers.get('authorization') ?? undefined)).toString('hex');
}

/** Which key a request of an authenticated caller used, for records: a prefix of its hash, never the key. */
export function keyIdOf(request: Request): string {
  return keyHashOf(request).slice(0, KEY_ID_DIGITS);
}

/**
 * The header with which an admin key acts on one workspace: its `workspaceId`. The request is
 * then that workspace's, as if sent with its private key (the key stays an admin key, so it still
 * manages workspaces). Any other key with it gets 403: the header never widens a key.
 */
export const WORKSPACE_HEADER = 'X-Workspace-Id';
const WORKSPACE_HEADER_LOWER = WORKSPACE_HEADER.toLowerCase();

/** The `X-Workspace-Id` of a request; null when it has none. */
export function workspaceHeaderOf(request: Request): string | null {
  return request.headers.get(WORKSPACE_HEADER_LOWER);
}

/**
 * Checks the bearer key against the route's scope: 401 when missing or unknown, 403 when too
 * weak; with `workspaceId` (the X-Workspace-Id header), see `authorize`.
 */
export function authenticate(store: WorkspaceStore, authorization: string | undefined, scope: Scope, workspaceId?: string | null): Principal {
  return authorize(store, bearerKey(authorization), scope, workspaceId);
}

/**
 * The principal of `key`, however it was sent: 401 when unknown, 403 when too weak for `scope`.
 * With `workspaceId` (the X-Workspace-Id header; null or undefined: none), an admin key acts on
 * that workspace (404 when there is none such); any other key gets 403.
 */
export function authorize(store: WorkspaceStore, key: string, scope: Scope, workspaceId?: string | null): Principal {
  const found = store.resolve(key);
  if (!found) throw unauthorized('the key is not valid', 'invalid_token');
  const principal = workspaceId === null || workspaceId === undefined ? found : actingOn(store, found, workspaceId);
  if (!ALLOWED[scope].includes(principal.kind)) {
    throw forbidden(`this route needs ${scope === 'admin' ? 'an admin' : 'a private'} key; ${principal.kind === 'public' ? 'a public' : 'a private'} key was sent`);
  }
  return principal;
}

/** An admin key's principal on the workspace `workspaceId` names. */
function actingOn(store: WorkspaceStore, principal: Principal, workspaceId: string): Principal {
  if (principal.kind !== 'admin') {
    throw forbidden(`only an admin key may choose a workspace with ${WORKSPACE_HEADER}; a ${principal.kind} key acts on its own workspace only`);
  }
  const workspace = store.find(workspaceId.trim());
  if (!workspace) throw notFound(`no workspace ${JSON.stringify(workspaceId)} (the ${WORKSPACE_HEADER} header)`);
  return { workspace, kind: 'admin' };
}

/**
 * A check that admits `token` (compared in constant time) or an admin key: for a caller such as
 * a metrics scraper that should hold no key with other powers. An empty token admits admin keys only.
 */
export function adminOrToken(store: WorkspaceStore, token: string): (authorization: string | undefined) => void {
  const tokenHash = token === '' ? undefined : hashKey(token);
  return (authorization) => {
    if (tokenHash && timingSafeEqual(hashKey(bearerKey(authorization)), tokenHash)) return;
    authenticate(store, authorization, 'admin');
  };
}

const principals = new WeakMap<Request, Principal>();

/** The caller of a request that passed its key check; undefined before it, or when it failed. */
export function principalOf(request: Request): Principal | undefined {
  return principals.get(request);
}

/** Records the caller of `request`, for `principalOf` (routes that read their key their own way). */
export function rememberPrincipal(request: Request, principal: Principal): Principal {
  principals.set(request, principal);
  return principal;
}

/**
 * The `scope` route option. The key is checked before the body is decoded or validated, so an
 * unauthenticated caller learns nothing about the route's input rules. An admin key with
 * X-Workspace-Id acts on that workspace (`authorize`): every route's `principal.workspace` is it.
 */
export function auth(store: WorkspaceStore) {
  return new Elysia({ name: 'auth' }).macro({
    scope: (scope: Scope) => ({
      transform(ctx: { request: Request; headers: Record<string, string | undefined>; body: unknown }) {
        rememberPrincipal(ctx.request, authenticate(store, ctx.headers.authorization, scope, workspaceHeaderOf(ctx.request)));
        ctx.body = decodeBody(ctx.body);
      },
      resolve({ request }: { request: Request }) {
        return { principal: principals.get(request)! };
      },
    }),
  });
}
