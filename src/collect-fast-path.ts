import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { Server } from 'elysia/universal';
import type { Logger } from './log';
import { WORKSPACE_HEADER } from './http/auth';
import type { ByteBudget } from './http/body-budget';
import { addressKey, clientAddress } from './http/client-address';
import { answerHead, withWireForm } from './http/gate-in-process';
import { decodeBody, handOnBody, rawBody, readWithin, type BodyPace } from './http/json-body';
import { HttpProblem } from './http/problem';
import type { RateLimiter } from './http/rate-limit';
import { logAnswer, requestIdOf, type AnsweredRequest } from './http/request-log';
import { SECURITY_HEADERS } from './http/security-headers';
import type { CidrList } from './net/address-ranges';
import type { Principal } from './workspaces/workspace-store';

export interface FastPathDeps {
  log: Logger;
  limiter: RateLimiter;
  bodies: ByteBudget;
  /** Told of each request answered here, as the app's request log tells its own (for metrics). */
  onAnswered: (answer: AnsweredRequest) => void;
  /** Told of a request refused here because its body never came whole (for metrics). */
  onBodyRefused: (status: number) => void;
  pace: BodyPace;
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES): its address's share of the body budget. */
  trustedProxies: CidrList;
}

/** A collection route served on the fast path: its schema, how it finds the caller, and its handler. */
export interface FastRoute {
  /** The route's pattern, as metrics label requests. */
  route: string;
  /** Bodies up to this size take the fast path; larger ones go to the app. */
  maxBytes: number;
  schema: TSchema;
  /** The caller of an Authorization header (throws as the app would refuse it). */
  principal(authorization: string): Principal;
  /** The route's own handler, given the caller and a body of `bytes` that passed its schema (and the request, for its facts): the JSON of its answer. */
  store(principal: Principal, bytes: number, body: unknown, request: Request, server: Server): Promise<string>;
  /** The status of its answer. */
  status: number;
}

/**
 * The hot path of collection: a plainly well-formed POST to a collection route (JSON with a
 * Content-Length, uncompressed, the key in the Authorization header, no Origin, no query string,
 * no X-Workspace-Id) that will be answered with success is handled here, on Bun's router, without
 * Elysia's per-request work: single-event requests spent most of their time there. It runs the
 * app's checks with the app's functions (the key, shedding, body decoding, the route's schema, the
 * per-address and per-key limits, the body budget), stores with the route's own handler, and logs
 * and counts the request as the app does. Anything else, and any request one of those checks would
 * refuse, goes on to the app as it came (its body, once read, handed on), which answers it with
 * every rule and error of the API. Such a request may take one more token of its address's rate
 * limit than it would through the app alone.
 */
export function collectFastPath(deps: FastPathDeps, app: { fetch(request: Request): Response | Promise<Response> }, route: FastRoute) {
  const schema = TypeCompiler.Compile(route.schema);
  // The answer's fixed headers, made once: a Response copies a Headers object far more cheaply
  // than it reads a plain object's entries.
  const answerHeaders = new Headers({ 'content-type': 'application/json', ...SECURITY_HEADERS });
  // The same answer's head as the connection gate writes it, made once: only the request id differs.
  const head = answerHead(route.status, answerHeaders);
  return async (request: Request, server: Server): Promise<Response> => {
    const started = performance.now();
    const headers = request.headers;
    const length = Number(headers.get('content-length'));
    const authorization = headers.get('authorization');
    const contentType = headers.get('content-type');
    if (
      !(length > 0 && length <= route.maxBytes) ||
      authorization === null ||
      // An admin key acting on another workspace: the app reads the header.
      headers.has(WORKSPACE_HEADER) ||
      headers.has('content-encoding') ||
      headers.has('origin') ||
      request.url.includes('?') ||
      !contentType?.toLowerCase().startsWith('application/json')
    ) {
      return app.fetch(request);
    }
    let principal: Principal;
    try {
      principal = route.principal(authorization);
    } catch {
      return app.fetch(request);
    }
    const owner = addressKey(clientAddress(request, server, deps.trustedProxies));
    if (!deps.bodies.tryAcquire(length, owner)) return app.fetch(request);
    const id = requestIdOf(request);
    try {
      let bytes: Uint8Array;
      try {
        bytes = await readWithin(request, deps.pace, route.maxBytes);
      } catch (err) {
        // The body never came whole (too slow, or cut short): the app's own answer, 408.
        const problem = err instanceof HttpProblem ? err : new HttpProblem(400, 'Bad Request', 'the body could not be read');
        const response = problem.toResponse();
        deps.onBodyRefused(problem.status);
        return answered(response, id, started, request);
      }
      let body: unknown;
      try {
        if (bytes.byteLength !== length) throw new Error('the body does not have the length its Content-Length announced');
        body = decodeBody(rawBody(bytes, contentType));
        if (!schema.Check(body) || !deps.limiter.admitCollection(request, server, principal)) throw new Error('refused');
      } catch {
        handOnBody(request, bytes);
        return app.fetch(request);
      }
      let text: string;
      try {
        text = await route.store(principal, length, body, request, server);
      } catch {
        // Nothing was stored (shedding, the log refused it, a call the route refuses): the app answers why.
        handOnBody(request, bytes);
        return app.fetch(request);
      }
      const response = withWireForm(new Response(text, { status: route.status, headers: answerHeaders }), `${head}x-request-id: ${id}\r\n`, text);
      response.headers.set('x-request-id', id);
      logAnswer(deps.log, deps.onAnswered, request, { id, route: route.route, status: route.status, ms: performance.now() - started, collected: true });
      return response;
    } finally {
      deps.bodies.release(length, owner);
    }
  };

  /** The answer with the headers the app gives every answer, logged and counted as the app does. */
  function answered(response: Response, id: string, started: number, request: Request): Response {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
    response.headers.set('x-request-id', id);
    logAnswer(deps.log, deps.onAnswered, request, { id, route: route.route, status: response.status, ms: performance.now() - started, collected: false });
    return response;
  }
}
