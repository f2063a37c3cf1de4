import { Elysia } from 'elysia';
import type { Server } from 'elysia/universal';
import { rememberPeer } from './client-address';
import { gatedPeer } from './connection-gate';
import { HttpProblem } from './problem';

/**
 * Elysia settings under which it finds the request line's path, whatever the Host header: by
 * default it looks for the path's `/` from the 12th character of the URL on, past the host it
 * assumes has at least 4 characters, so with `Host: a` (`http://a/events?x=/queries`) it took the
 * `/queries` of the query string for the path.
 */
export const REQUEST_TARGET_CONFIG = { handler: { standardHostname: false } } as const;

/**
 * Requests whose URL is only a path, which Elysia cannot route (it looks for the path after a
 * scheme and host, and could find it in the query string): Bun hands such URLs over when there is
 * no Host header (HTTP/1.0) or one that is no host (`a/b`). The first is served under a URL with
 * a host; the second gets 400, as RFC 9112 (section 3.2) asks. First of the app's hooks: a request
 * served again is logged, limited and counted once, as the one served.
 */
export function requestTarget(app: () => { fetch(request: Request): Response | Promise<Response> }) {
  return new Elysia({ name: 'request-target' }).onRequest(({ request, server }) => {
    if (request.url.charCodeAt(0) !== 47 /* / */) return;
    if (request.headers.has('host')) {
      throw new HttpProblem(400, 'Bad Request', 'the Host header is not a valid host name (with an optional port)', { headers: { connection: 'close' } });
    }
    const served = new Request(`http://localhost${request.url}`, request);
    const peer = (server as Server | null)?.requestIP(request);
    if (peer) rememberPeer(served, gatedPeer(peer.address, peer.port) ?? peer.address);
    return app().fetch(served);
  });
}
