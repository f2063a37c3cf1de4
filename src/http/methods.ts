import { HttpProblem, notFound } from './problem';
import { pathOf } from './url-path';

/** A route as Elysia lists it: `GET`, `/webhooks/:uuid`. */
export interface RouteLike {
  method: string;
  path: string;
}

/** How the service lists methods, most common first. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const byOrder = (a: string, b: string) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b);

/** "GET, HEAD and POST". */
const inWords = (methods: readonly string[]) => (methods.length < 2 ? methods.join('') : `${methods.slice(0, -1).join(', ')} and ${methods.at(-1)}`);

/** Methods as answered: HEAD wherever GET is (the server answers it for every GET route). */
function answered(methods: Iterable<string>): string[] {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  return [...set].sort(byOrder);
}

/** The methods some request is answered with: the routes' own, HEAD, and OPTIONS (CORS preflights). */
export function servedMethods(routes: readonly RouteLike[]): string[] {
  return answered([...routes.map((route) => route.method), 'OPTIONS']);
}

/** 501 for a method no route of the service takes: CONNECT, TRACE, the WebDAV methods, any other. */
export function notImplemented(method: string, served: readonly string[]): HttpProblem {
  // A CONNECT asks the service to be a proxy, which a client pointed at the wrong address may believe.
  const what = method === 'CONNECT' ? 'the service is not a proxy and does not implement CONNECT' : `the service does not implement ${method}`;
  return new HttpProblem(501, 'Not Implemented', `${what}; it answers ${inWords(served)}`);
}

/** Whether a route's path (`/webhooks/:uuid/test`) takes a request's path. */
function takes(pattern: string[], path: string[]): boolean {
  return pattern.length === path.length && pattern.every((segment, i) => (segment.startsWith(':') ? path[i] !== '' : segment === path[i]));
}

/**
 * The answer to a request that no route takes (Elysia's NOT_FOUND): 501 for a method the service
 * implements on no path, 405 with `Allow` for a path it serves with other methods, else 404.
 * OPTIONS stays 404: the service answers it only as a CORS preflight, and a preflight it refuses
 * fails with 404 (docs/browsers.md). The routes are read once, at the first such request: the
 * app is composed by then.
 */
export function unroutedAnswers(routes: () => readonly RouteLike[]): (request: Request) => HttpProblem {
  let known: { served: string[]; patterns: Array<{ method: string; segments: string[] }> } | undefined;
  return (request) => {
    known ??= { served: servedMethods(routes()), patterns: routes().map((route) => ({ method: route.method, segments: route.path.split('/') })) };
    const { method } = request;
    const path = pathOf(request.url);
    if (!known.served.includes(method)) return notImplemented(method, known.served);
    if (method !== 'OPTIONS') {
      const segments = path.split('/');
      const allowed = answered(known.patterns.filter((p) => takes(p.segments, segments)).map((p) => p.method));
      if (allowed.length > 0) {
        return new HttpProblem(405, 'Method Not Allowed', `${path} does not take ${method}; it takes ${inWords(allowed)}`, { headers: { allow: allowed.join(', ') } });
      }
    }
    return notFound(`no route ${method} ${path}`);
  };
}
