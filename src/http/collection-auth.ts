import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import { authenticate, authorize, rememberPrincipal, workspaceHeaderOf } from './auth';
import { decodeBody, type JsonTypes } from './json-body';
import { forbidden, unauthorized } from './problem';

/** An `Authorization: Basic <base64>` header; the base64 is its group. */
export const BASIC = /^Basic +([A-Za-z0-9+/=_-]+) *$/i;
const BEARER = /^Bearer /i;

/** Basic headers that held a valid key, and the key: a client sends the same one with every call. */
const basicKeys = new Map<string, string>();
/** Basic headers remembered, at most (only those of valid keys, so guesses cannot fill it). */
const BASIC_KEYS = 1000;

/**
 * The caller of an `Authorization` header: Bearer, or HTTP Basic with the write key, as Segment's
 * clients send it; `workspaceId` is the X-Workspace-Id header (an admin key's chosen workspace).
 */
export function headerPrincipal(store: WorkspaceStore, authorization: string, workspaceId: string | null = null): Principal {
  if (BEARER.test(authorization)) return authenticate(store, authorization, 'ingest', workspaceId);
  const known = basicKeys.get(authorization);
  if (known !== undefined) return authorize(store, known, 'ingest', workspaceId);
  const match = BASIC.exec(authorization);
  if (!match) throw unauthorized('the Authorization header must be "Basic <base64 of writeKey:>" or "Bearer <key>"', 'invalid_request');
  const credentials = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  // Segment's clients put the key in the user name; some put it in the password instead.
  const key = colon < 0 ? credentials : credentials.slice(0, colon) || credentials.slice(colon + 1);
  const principal = authorize(store, key, 'ingest', workspaceId);
  if (basicKeys.size >= BASIC_KEYS) basicKeys.clear();
  basicKeys.set(authorization, key);
  return principal;
}

/**
 * The caller of a `writeKey` in the body or, failing that, in the query string: for beacons and
 * script tags, which cannot set headers. Only a public key: a private key there would end up in
 * logs, histories and page sources.
 */
function writeKeyPrincipal(store: WorkspaceStore, body: unknown, url: string, workspaceId: string | null): Principal {
  const inBody = body !== null && typeof body === 'object' ? (body as { writeKey?: unknown }).writeKey : undefined;
  // The query string alone: a request without a Host header has a URL that `new URL` refuses.
  const query = url.indexOf('?');
  const key = typeof inBody === 'string' && inBody !== '' ? inBody : query < 0 ? null : new URLSearchParams(url.slice(query + 1)).get('writeKey');
  if (!key) {
    throw unauthorized(
      'send the key in an Authorization header (Bearer, or Basic with the write key as user name), or a public key as "writeKey" in the body or the query string',
      'invalid_request',
    );
  }
  const principal = authorize(store, key, 'ingest', workspaceId);
  if (principal.kind !== 'public') {
    throw forbidden('only a public key may be sent as writeKey (body or query string); send private keys in the Authorization header');
  }
  return principal;
}

/** 403 when a browser page sends with a public key of a workspace that does not list its origin. */
function checkOrigin(principal: Principal, origin: string | null): void {
  if (origin === null || principal.kind !== 'public') return;
  const allowed = principal.workspace.allowedOrigins;
  if (!allowed.includes('*') && !allowed.includes(origin)) {
    throw forbidden(`origin ${origin} is not in the allowedOrigins of this key's workspace`);
  }
}

/**
 * The `transform` step of a collection route: finds the caller however it sent its key (a key in
 * a header is checked before the body is decoded), checks the page's origin against the
 * workspace's allowedOrigins, and hands the body decoded as the route reads it to `setBody`
 * (before the origin check, so that a refusal's events are counted). It takes the request and
 * body, not Elysia's context: a hook handed the whole context makes Elysia prepare all of it
 * (cookies, query, a headers object) for every request of the route.
 */
export function readCollectionRequest(store: WorkspaceStore, types: JsonTypes) {
  return (request: Request, rawBody: unknown, setBody: (body: unknown) => void): void => {
    const authorization = request.headers.get('authorization');
    const workspaceId = workspaceHeaderOf(request);
    const fromHeader = authorization ? headerPrincipal(store, authorization, workspaceId) : undefined;
    const body = decodeBody(rawBody, types);
    setBody(body);
    // Remembered before the origin check, so that its refusal is counted for the workspace.
    const principal = rememberPrincipal(request, fromHeader ?? writeKeyPrincipal(store, body, request.url, workspaceId));
    checkOrigin(principal, request.headers.get('origin'));
  };
}
