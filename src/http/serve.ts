import type { Server } from 'bun';
import type { AnyElysia } from 'elysia';
import type { Logger } from '../log';
import { rememberPeer } from './client-address';
import { openGate } from './connection-gate';
import type { InProcess } from './gate-in-process';
import { servedMethods } from './methods';
import { HttpProblem } from './problem';
import type { AnsweredRequest } from './request-log';
import { SECURITY_HEADERS } from './security-headers';

/** The listening server as the service uses it, whichever runtime serves it. */
export interface HttpServer {
  readonly port: number;
  /** Stops accepting; without `force` resolves once in-flight requests are answered. */
  stop(force: boolean): Promise<void>;
}

export interface ServeOptions {
  port: number;
  hostname: string;
  /** The transport's own cap on a body; the app's 413 answers below it. */
  maxRequestBodySize: number;
  idleTimeoutSeconds: number;
  /** Whether clients connect through the connection gate (Bun only: Deno's server needs none). */
  gate: boolean;
  log: Logger;
  /** Told of each request answered outside the app (by the connection gate), as the app's request log tells its own. */
  onAnswered?: (answer: AnsweredRequest) => void;
}

/**
 * The part of Deno's API used here; declared locally because the project type-checks against
 * bun-types only.
 */
interface DenoServer {
  readonly addr: { port: number };
  shutdown(): Promise<void>;
}
declare const Deno:
  | {
      serve(
        options: { port: number; hostname: string; onListen: () => void },
        handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
      ): DenoServer;
    }
  | undefined;

/**
 * Serves `app` on Bun (the primary runtime) or Deno. Elysia itself picks its Bun adapter when
 * `Bun` exists and the web-standard one otherwise, which cannot listen: under Deno the app's
 * `fetch` goes to `Deno.serve`. Deno's server has no per-connection idle timeout and no body
 * cap of its own, so those two options apply under Bun only (the app's own body limit and body
 * timeout still apply on both).
 */
export function serve(app: AnyElysia, options: ServeOptions): HttpServer {
  try {
    return listen(app, options);
  } catch (err) {
    // A port already taken (another service?) or not ours to take: say which.
    throw new Error(`cannot listen on ${options.hostname}:${options.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function listen(app: AnyElysia, options: ServeOptions): HttpServer {
  const unhandled = (error: unknown) => {
    options.log.error('unhandled error', { err: error });
    const response = new HttpProblem(500, 'Internal Server Error', 'the server failed to handle the request; it has been logged').toResponse();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
    return response;
  };
  if (typeof Bun !== 'undefined') {
    // With the gate, Bun's server on loopback only: clients reach it through the gate, which puts
    // right what it gets wrong about connections (src/http/connection-gate.ts).
    const server = app.listen({
      port: options.gate ? 0 : options.port,
      hostname: options.gate ? '127.0.0.1' : options.hostname,
      // Elysia asks for SO_REUSEPORT, with which a second service started on the same port would
      // silently take half the connections (and their events, into its own DATA_DIR): it must
      // fail to start instead.
      reusePort: false,
      maxRequestBodySize: options.maxRequestBodySize,
      idleTimeout: options.idleTimeoutSeconds,
      // Outside production Bun answers an error that escapes the app with its developer page (the
      // working directory, stack frames, source lines), and never logs the request. The app maps
      // every error itself; whatever still escapes it is a bug, answered as one.
      development: false,
      error: unhandled,
    }).server!;
    if (!options.gate) return { port: server.port!, stop: (force) => server.stop(force) };
    try {
      const gate = openGate({
        hostname: options.hostname,
        port: options.port,
        upstreamPort: server.port!,
        served: servedMethods(app.routes),
        maxRequestBodySize: options.maxRequestBodySize,
        log: options.log,
        onAnswered: options.onAnswered,
        inProcess: collectionInProcess(app, server, unhandled),
        idleTimeoutSeconds: options.idleTimeoutSeconds,
      });
      return {
        port: gate.port,
        stop: async (force) => {
          gate.stop();
          // The gate's connections end as the server closes theirs: idle ones now, the others
          // once answered, by the server or in this process.
          await Promise.all([server.stop(force), force ? undefined : gate.answered()]);
        },
      };
    } catch (err) {
      void server.stop(true);
      throw err;
    }
  }
  if (typeof Deno !== 'undefined') {
    // onListen replaces Deno's own "Listening on" line, which would break the JSON-lines log.
    // Elysia sees no server under Deno: the client's address comes beside the request.
    const server = Deno.serve({ port: options.port, hostname: options.hostname, onListen: () => {} }, (request, info) => {
      rememberPeer(request, info.remoteAddr.hostname);
      return app.fetch(request);
    });
    let drained: Promise<void> | undefined;
    return {
      port: server.addr.port,
      // Deno cannot cut in-flight requests short: a forced stop stops waiting for them instead,
      // and they end when the process exits.
      stop: (force) => {
        drained ??= server.shutdown();
        return force ? Promise.resolve() : drained;
      },
    };
  }
  throw new Error('unsupported runtime: the service runs under Bun or Deno');
}

type BunRoute = (request: Request, server: Server<unknown>) => Response | Promise<Response>;

/**
 * The collection routes Bun's own router takes before Elysia (the app's `serve.routes`, POST),
 * answered by the gate in this process with the same handlers (src/http/gate-in-process.ts).
 */
function collectionInProcess(app: AnyElysia, server: Server<unknown>, error: (error: unknown) => Response): InProcess | undefined {
  const routes = (app.config.serve as { routes?: Record<string, Record<string, BunRoute>> } | undefined)?.routes ?? {};
  const handlers = new Map<string, (request: Request) => Response | Promise<Response>>();
  for (const [path, methods] of Object.entries(routes)) {
    const post = methods.POST;
    if (post) handlers.set(path, (request) => post(request, server));
  }
  return handlers.size === 0 ? undefined : { routes: handlers, error };
}

/** Whether `host` stands for every interface of the machine (IPv4's 0.0.0.0, IPv6's ::). */
export const allInterfaces = (host: string) => host === '0.0.0.0' || host === '::';

/** The URL at which this machine reaches a server listening on `host`:`port` (its loopback address for every interface). */
export function localUrl(host: string, port: number): string {
  const reached = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}
