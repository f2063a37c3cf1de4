import { Elysia, StatusMap } from 'elysia';
import type { Logger } from '../log';

const started = new WeakMap<Request, { id: string; at: number }>();

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
export function requestLog(log: Logger, onAnswered?: (answer: AnsweredRequest) => void) {
  return new Elysia({ name: 'request-log' })
    .onRequest(({ request, set }) => {
      const id = request.headers.get('x-request-id')?.slice(0, 64) || crypto.randomUUID();
      started.set(request, { id, at: performance.now() });
      set.headers['x-request-id'] = id;
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, responseValue }) => {
      const start = started.get(request);
      const ms = start ? performance.now() - start.at : undefined;
      const status = answeredStatus(set, responseValue);
      log.info('request', {
        requestId: start?.id,
        method: request.method,
        path: new URL(request.url).pathname,
        status,
        ms: ms === undefined ? undefined : Math.round(ms * 10) / 10,
      });
      if (onAnswered && ms !== undefined) onAnswered({ method: request.method, route: route || undefined, status, seconds: ms / 1000 });
    });
}
