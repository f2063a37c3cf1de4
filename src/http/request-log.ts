import { Elysia } from 'elysia';
import type { Logger } from '../log';

const started = new WeakMap<Request, { id: string; at: number }>();

/** Gives each request an id (echoed in `x-request-id`) and logs method, path, status and latency. */
export function requestLog(log: Logger) {
  return new Elysia({ name: 'request-log' })
    .onRequest(({ request, set }) => {
      const id = request.headers.get('x-request-id')?.slice(0, 64) || crypto.randomUUID();
      started.set(request, { id, at: performance.now() });
      set.headers['x-request-id'] = id;
    })
    .onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
      const start = started.get(request);
      log.info('request', {
        requestId: start?.id,
        method: request.method,
        path: new URL(request.url).pathname,
        // A handler that returns a Response sets its status there, not in `set`.
        status: responseValue instanceof Response ? responseValue.status : set.status,
        ms: start ? Math.round((performance.now() - start.at) * 10) / 10 : undefined,
      });
    });
}
