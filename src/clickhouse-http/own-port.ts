import { Elysia, type AnyElysia } from 'elysia';
import { clientAddress, rememberPeer } from '../http/client-address';
import { serve, type HttpServer, type ServeOptions } from '../http/serve';
import { CidrList } from '../net/address-ranges';
import { CLICKHOUSE_PATH } from './model';

/** No proxy is trusted when reading the peer: the app applies TRUSTED_PROXIES to the request it is handed. */
const NO_PROXIES = new CidrList([]);

/**
 * The interface on a port of its own (CLICKHOUSE_INTERFACE_PORT), for tools that take a host and
 * port but no path: each request there is handed to the service's app under /clickhouse (`/` is
 * `/clickhouse`, `/ping` is `/clickhouse/ping`) with its client's address, so that it meets the
 * same keys, rate limits, log and errors as on the service's own port.
 */
export function serveOwnPort(app: AnyElysia, options: ServeOptions): HttpServer {
  const forward = ({ request, server }: { request: Request; server: Parameters<typeof clientAddress>[1] }) => {
    const url = new URL(request.url);
    url.pathname = url.pathname === '/' ? CLICKHOUSE_PATH : `${CLICKHOUSE_PATH}${url.pathname}`;
    const handedOn = new Request(url.href, { method: request.method, headers: request.headers, body: request.body, duplex: 'half' } as RequestInit);
    rememberPeer(handedOn, clientAddress(request, server, NO_PROXIES));
    return app.handle(handedOn);
  };
  // parse: 'none' leaves the body unread, for the app to read under its own limits.
  const forwarder = new Elysia({ name: 'clickhouse-own-port' }).get('/*', forward).post('/*', forward, { parse: 'none' });
  return serve(forwarder, options);
}
