import { authenticate, authorize } from '../http/auth';
import { unauthorized } from '../http/problem';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';

const BASIC = /^Basic +([A-Za-z0-9+/=_-]+) *$/i;
const BEARER = /^Bearer /i;

/**
 * The caller of a Segment route, as Segment's clients authenticate: HTTP Basic with the write
 * key (a public key) as user name and an empty password, or `writeKey` in the body when there
 * is no Authorization header; a Bearer key works as on every other route.
 */
export function writeKeyPrincipal(store: WorkspaceStore, authorization: string | undefined, body: unknown): Principal {
  if (authorization) {
    if (BEARER.test(authorization)) return authenticate(store, authorization, 'ingest');
    const match = BASIC.exec(authorization);
    if (!match) throw unauthorized('the Authorization header must be "Basic <base64 of writeKey:>" or "Bearer <key>"', 'invalid_request');
    const credentials = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = credentials.indexOf(':');
    // Segment's clients put the key in the user name; some put it in the password instead.
    const key = colon < 0 ? credentials : credentials.slice(0, colon) || credentials.slice(colon + 1);
    return authorize(store, key, 'ingest');
  }
  const writeKey = body !== null && typeof body === 'object' ? (body as { writeKey?: unknown }).writeKey : undefined;
  if (typeof writeKey === 'string' && writeKey !== '') return authorize(store, writeKey, 'ingest');
  throw unauthorized('send the write key as the user name of HTTP Basic authentication, as "writeKey" in the body, or as a Bearer key', 'invalid_request');
}
