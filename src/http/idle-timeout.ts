import type { Server } from 'bun';
import { Elysia } from 'elysia';

/** Bun's idle timeout, in the whole seconds it counts. */
export const idleTimeoutSeconds = (ms: number) => Math.ceil(ms / 1000);

/** How often the idle timers of connections with a request in flight are re-armed. */
const REARM_EVERY_MS = 1000;

/**
 * Bun closes a connection that has been silent for its idle timeout, and counts a request being
 * handled as silence: a query running 15 s, or an insert waiting on a slow server, would have
 * its connection reset before the answer. So, while a request is in flight, its connection's
 * timer is re-armed every second; each route's own limits (body, query and storage timeouts)
 * bound the request instead. Between requests (idle keep-alive) the idle timeout applies as set;
 * before a connection's first request is complete, Bun applies its own fixed 10 s.
 */
export function idleTimeoutOutsideRequests(idleTimeoutSeconds: number) {
  const inFlight = new Map<Request, Server<unknown>>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const rearm = () => {
    for (const [request, server] of inFlight) {
      if (request.signal.aborted) inFlight.delete(request);
      else server.timeout(request, idleTimeoutSeconds);
    }
    if (inFlight.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return new Elysia({ name: 'idle-timeout' })
    .onRequest(({ request, server }) => {
      if (!server) return;
      inFlight.set(request, server as Server<unknown>);
      timer ??= setInterval(rearm, REARM_EVERY_MS).unref();
    })
    .onAfterResponse({ as: 'global' }, ({ request }) => {
      inFlight.delete(request);
    });
}
