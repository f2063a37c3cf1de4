import { Elysia } from 'elysia';
import { answeredEarly } from './request-log';
import { pathOf } from './url-path';

export interface CorsOptions {
  /** Paths whose POST collects events: open to every origin (a workspace may narrow its public keys). */
  collectionPaths: ReadonlySet<string>;
  /** Origins that may call every route, private ones included (a console hosted elsewhere). */
  consoleOrigins: ReadonlySet<string>;
}

/** Headers a preflight always allows, whatever the request asks for. */
const BASE_ALLOWED_HEADERS = 'Authorization, Content-Type, Content-Encoding';
/** And on the other routes, for a console hosted elsewhere: an admin key's chosen workspace. */
const CONSOLE_ALLOWED_HEADERS = `${BASE_ALLOWED_HEADERS}, X-Workspace-Id`;
/** A list of header names, as `Access-Control-Request-Headers` carries it. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;
/** A day: browsers that allow that long (Chromium caps it at two hours) preflight once a day. */
const MAX_AGE_SECONDS = 86_400;
/** What a page may read of an answer besides the basic headers: why it was refused (and when to retry), and its id. */
const EXPOSED_HEADERS = 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';

/** The headers a preflight allows: ours, and whatever the SDK asks for (RudderStack's, for one). */
function allowedHeaders(base: string, requested: string | null): string {
  const asked = requested?.trim();
  return asked && HEADER_LIST.test(asked) ? `${base}, ${asked}` : base;
}

/**
 * CORS: the collection routes answer any origin, preflights included, and every answer of theirs
 * (errors, 429 and 503 too) carries the headers, so an SDK can read why it was refused. Other
 * routes take private keys: they answer only the listed console origins, echoed, never `*`.
 * A request without `Origin` (no browser, or same-origin GET) costs one header look-up.
 */
export function cors(options: CorsOptions) {
  return new Elysia({ name: 'cors' }).onRequest(({ request, set }) => {
    const origin = request.headers.get('origin');
    if (origin === null) return;
    const requestedMethod = request.method === 'OPTIONS' ? request.headers.get('access-control-request-method') : null;
    const method = requestedMethod?.toUpperCase() ?? request.method;
    const collection = method === 'POST' && options.collectionPaths.has(pathOf(request.url));
    if (!collection && !options.consoleOrigins.has(origin)) return;
    if (requestedMethod === null) {
      set.headers['access-control-allow-origin'] = origin;
      set.headers['access-control-expose-headers'] = EXPOSED_HEADERS;
      set.headers.vary = 'Origin';
      return;
    }
    answeredEarly(request, 204);
    return new Response(null, {
      status: 204,
      headers: {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': collection ? 'POST' : 'GET, POST, PUT, DELETE',
        'access-control-allow-headers': allowedHeaders(collection ? BASE_ALLOWED_HEADERS : CONSOLE_ALLOWED_HEADERS, request.headers.get('access-control-request-headers')),
        'access-control-max-age': String(MAX_AGE_SECONDS),
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    });
  });
}
