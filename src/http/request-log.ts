import { Elysia, StatusMap } from 'elysia';
import type { Logger } from '../log';
import { pathOf } from './url-path';

/** Requests being answered: their id, when they came, and where they are logged. */
const started = new WeakMap<Request, { id: string; at: number; log: Logger; onAnswered: ((answer: AnsweredRequest) => void) | undefined }>();

/** A request once its answer has gone out. */
export interface AnsweredRequest {
  method: string;
  /** The route pattern it matched (`/webhooks/:uuid`), undefined when it matched none. */
  route: string | undefined;
  status: number;
  seconds: number;
}

/** The status a request was answered with. A handler that returns a Response sets its status there, not in `set`. */
export function answeredStatus(set: { status?: number | keyof StatusMap }, responseValue: unknown): number {
  if (responseValue instanceof Response) return responseValue.status;
  return typeof set.status === 'string' ? StatusMap[set.status] : (set.status ?? 200);
}

/**
 * Gives each request an id (echoed in `x-request-id`) and logs method, path, status and latency;
 * `onAnswered` hears of each request too (for metrics).
 */
export function requestLog(log: Logger, onAnswered?: (answer: AnsweredRequest) => void, collectionPaths: ReadonlySet<string> = new Set()) {
  return new Elysia({ name: 'request-log' })
    .onRequest(({ request, set }) => {
      const id = requestIdOf(request);
      started.set(request, { id, at: performance.now(), log, onAnswered });
      set.headers['x-request-id'] = id;
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
      const start = started.get(request);
      const status = answeredStatus(set, responseValue);
      const collected = status < 400 && request.method === 'POST' && collectionPaths.has(pathOf(request.url));
      logAnswer(log, onAnswered, request, { id: start?.id, route: route || undefined, status, ms: start ? performance.now() - start.at : undefined, collected });
    });
}

/**
 * Logs a request that a hook answered before any route was looked for (a CORS preflight): Elysia
 * runs no afterResponse hook for such an answer.
 */
export function answeredEarly(request: Request, status: number): void {
  const start = started.get(request);
  if (start) logAnswer(start.log, start.onAnswered, request, { id: start.id, route: undefined, status, ms: performance.now() - start.at, collected: false });
}

/** New request ids: this process's random prefix and a count, unique without a random UUID per request. */
const ID_PREFIX = crypto.randomUUID().slice(0, 8);
let requests = 0;

/** A new request id. */
export const newRequestId = () => `${ID_PREFIX}-${(++requests).toString(36)}`;

/** The request id a client sent (cut to 64 characters), or a new one. */
export function requestIdOf(request: Request): string {
  return request.headers.get('x-request-id')?.slice(0, 64) || newRequestId();
}

/**
 * Logs a request once answered (collection that succeeded at debug level), and tells `onAnswered`
 * (for metrics). The connection gate logs what it answers itself, with no Request made.
 */
export function logAnswer(
  log: Logger,
  onAnswered: ((answer: AnsweredRequest) => void) | undefined,
  request: Pick<Request, 'method' | 'url'>,
  answer: { id: string | undefined; route: string | undefined; status: number; ms: number | undefined; collected: boolean },
): void {
  const { id, route, status, ms, collected } = answer;
  // Events taken in are counted in /metrics; a line each (thousands a second) would bury the rest.
  const level = collected ? 'debug' : 'info';
  if (log.writes(level)) log[level]('request', { requestId: id, method: request.method, path: pathOf(request.url), status, ms: ms === undefined ? undefined : Math.round(ms * 10) / 10 });
  if (onAnswered && ms !== undefined) onAnswered({ method: request.method, route, status, seconds: ms / 1000 });
}
