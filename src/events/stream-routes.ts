import type { Server } from 'bun';
import { Elysia, t } from 'elysia';
import { auth, keyHashOf } from '../http/auth';
import { problems, tooManyRequests } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { StreamEventsQuery } from './model';
import { StreamLimitError, type EventStreams } from './stream';

/** Seconds a client refused for holding too many streams should wait: streams end slowly. */
const STREAM_RETRY_AFTER_SECONDS = 5;

const STREAM_DESCRIPTION =
  'Server-sent events (`text/event-stream`) of the workspace\'s events as they are stored, oldest first. Each default message\'s `data` is one event as `GET /events` returns it; ' +
  '`event: ready` opens the stream (its `data` echoes the filters), `event: dropped` (`{"dropped": n}`) says n events were skipped because the client read too slowly, ' +
  '`event: end` (`{"reason": ...}`) closes it (shutdown, workspace deleted), and `: keep-alive` comments come when nothing else does. ' +
  'The key goes in the Authorization header, so browsers read it with fetch rather than EventSource.';

/** `GET /events/stream`: a live tail of stored events, with a private key. */
export function eventStreamRoutes(store: WorkspaceStore, streams: EventStreams) {
  return new Elysia({ name: 'event-stream', normalize: false }).use(auth(store)).get(
    '/events/stream',
    ({ query, principal, request, server }) => {
      // The key passed the scope check already; it is counted by its hash, never kept.
      const keyHash = keyHashOf(request);
      let body: ReadableStream<Uint8Array>;
      try {
        body = streams.open(keyHash, principal.workspace, query);
      } catch (err) {
        if (err instanceof StreamLimitError) throw tooManyRequests(err.message, STREAM_RETRY_AFTER_SECONDS);
        throw err;
      }
      // A stream is quiet between events and heartbeats: Bun's idle timeout (HTTP_IDLE_TIMEOUT_MS)
      // must not cut it. A client that went away is noticed when a heartbeat cannot be written.
      (server as Server<unknown> | null)?.timeout(request, 0);
      return new Response(body, {
        headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' },
      });
    },
    {
      scope: 'private',
      query: StreamEventsQuery,
      response: { 200: t.String({ contentMediaType: 'text/event-stream', description: 'Server-sent events: one message per stored event that matches the filters.' }), ...problems(400, 401, 403, 429) },
      detail: { tags: ['Events'], summary: 'Stream events as they are stored', description: STREAM_DESCRIPTION },
    },
  );
}
