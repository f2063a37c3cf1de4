import { jsonText } from '../http/json-text';
import { Elysia } from 'elysia';
import type { Server } from 'elysia/universal';
import { auth, principalOf } from '../http/auth';
import { readCollectionRequest } from '../http/collection-auth';
import { bodyBytes } from '../http/json-body';
import { BODY_PROBLEMS, invalidInput, payloadTooLarge, problems, type ProblemError } from '../http/problem';
import { ownStatements, type FastReads } from '../properties/fast-reads';
import type { Storage } from '../storage/storage';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import type { MonotonicClock } from '../monotonic-clock';
import { lacksEventName, toStoredInput, TRACK_NEEDS_EVENT } from './event-input';
import { acceptEvent } from './event-rows';
import type { IngestBuffer } from './ingest-buffer';
import { countRefusedEvents } from './refused-events';
import { listEvents } from './list-events';
import { createEventsBody, EventsPage, ListEventsQuery, type EventDTO, type EventInput } from './model';

/** Events counted by workspace (its database name). */
export interface IngestMetrics {
  eventsAccepted(workspace: string, events: number): void;
  /** `workspace` is undefined when the events were refused before their key was read (queue full, body unreadable). */
  eventsRejected(workspace: string | undefined, status: number, events: number): void;
}

/** What adds the request's facts (country, browser, campaign, …) to each event of it, before it is stored (src/web-analytics/enrichment.ts). */
export type RequestEnricher = (request: Request, server: Server | null) => (event: EventInput) => EventInput;

export interface EventRoutesDeps {
  storage: Storage;
  store: WorkspaceStore;
  buffer: IngestBuffer;
  /** Gives each accepted event its parsedAt: acceptance order, which webhooks deliver in. */
  clock: MonotonicClock;
  maxEventsPerRequest: number;
  maxEventBytes: number;
  metrics: IngestMetrics;
  /** Absent: events are stored as sent. */
  enrich?: RequestEnricher;
  /** Reads property filters from the columns that store them, where there are (src/properties/). */
  fastReads?: FastReads;
}

/** An answer whose JSON text is built already (schema in `response`, for the OpenAPI document). */

/** 413 naming every event over the per-event limit (measured as compact JSON). */
function checkEventSizes(events: readonly EventDTO[], maxEventBytes: number, bodyBytes: number): void {
  // No event is larger than the body that holds it: a body within the limit needs no count.
  if (bodyBytes <= maxEventBytes) return;
  const errors: ProblemError[] = [];
  events.forEach((e, i) => {
    const bytes = Buffer.byteLength(JSON.stringify(e));
    if (bytes > maxEventBytes) errors.push({ pointer: `/events/${i}`, detail: `is ${bytes} bytes; the limit is ${maxEventBytes}` });
  });
  if (errors.length > 0) throw payloadTooLarge(`${errors.length} event(s) over the limit of ${maxEventBytes} bytes each`, errors);
}

/** 400 naming every track without its `event`: the batch is atomic, so nothing is stored. */
function checkEventNames(events: readonly EventDTO[]): void {
  let errors: ProblemError[] | undefined;
  events.forEach((e, i) => {
    if (lacksEventName(e)) (errors ??= []).push({ pointer: `/events/${i}/event`, detail: TRACK_NEEDS_EVENT });
  });
  if (errors) throw invalidInput(`${errors.length} track event(s) without an event; nothing was stored`, errors);
}

/**
 * Stores a validated batch of the caller's workspace and answers the 201's JSON, the stored events
 * (413 naming events over the size limit, else 400 naming tracks without an event); `bodyBytes`
 * is the size of the body that held them; `enrich` adds what their request tells. The route's handler, and the collection fast path's (which
 * hands a refused batch on to the app to answer).
 */
export async function storeEvents(deps: EventRoutesDeps, principal: Principal, events: readonly EventDTO[], bodyBytes: number, enrich?: (event: EventInput) => EventInput): Promise<string> {
  const database = principal.workspace.databaseName;
  checkEventSizes(events, deps.maxEventBytes, bodyBytes);
  checkEventNames(events);
  const accepted = events.map((e) => acceptEvent(enrich ? enrich(toStoredInput(e)) : toStoredInput(e), deps.clock.next(), database));
  await deps.buffer.submit(database, accepted, 'events');
  const n = accepted.length;
  deps.metrics.eventsAccepted(database, n);
  // The events' JSON is made once, for the insert; the answer reuses it (EventsPage).
  return `{"results":[${accepted.map((a) => a.json).join(',')}],"limit":${n},"offset":0,"total":${n}}`;
}

/** The path of the collection route, which the CORS plugin opens to any origin. */
export const EVENTS_PATH = '/events';

export function eventRoutes(deps: EventRoutesDeps) {
  const readRequest = readCollectionRequest(deps.store, 'json-or-text');
  return new Elysia({ name: 'events', normalize: false })
    .use(auth(deps.store))
    .post(
      EVENTS_PATH,
      async ({ body, request, server }) => jsonText(await storeEvents(deps, principalOf(request)!, body.events, bodyBytes(request), deps.enrich?.(request, server)), 201),
      {
        transform: (ctx) => {
          // Before the key check and the decoding: shedding must cost next to nothing.
          deps.buffer.admit();
          readRequest(ctx.request, ctx.body, (body) => (ctx.body = body as typeof ctx.body));
        },
        afterResponse: countRefusedEvents(deps.metrics, 201, 'events'),
        body: createEventsBody(deps.maxEventsPerRequest),
        response: { 201: EventsPage, ...problems(...BODY_PROBLEMS, 401, 403) },
        detail: {
          tags: ['Events'],
          summary: 'Send events',
          description:
            'Stores a batch atomically; answers 201 once the events are in the ingest log on disk (reads made after the 201 see them). JSON as application/json or text/plain (beacons); the key in the Authorization header, or a public key as `writeKey` in the body or the query string.',
        },
      },
    )
    .get(
      EVENTS_PATH,
      async ({ query, principal }) => {
        const database = principal.workspace.databaseName;
        await deps.buffer.loaded(database);
        return jsonText(await listEvents(deps.storage, database, query, ownStatements(deps.fastReads, database)));
      },
      {
      scope: 'private',
      query: ListEventsQuery,
      response: { 200: EventsPage, ...problems(400, 401, 403, 503) },
        detail: { tags: ['Events'], summary: 'List events', description: 'Filtered, ordered, paginated; `total` is the exact count of matches.' },
      },
    );
}
