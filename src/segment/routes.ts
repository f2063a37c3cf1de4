import { Elysia } from 'elysia';
import { acceptEvent } from '../events/event-rows';
import { IngestOverloadedError } from '../events/ingest-buffer';
import type { EventInput } from '../events/model';
import type { EventRoutesDeps } from '../events/routes';
import { bodyBytes, RawBody } from '../http/json-body';
import { countRefusedEvents } from '../events/refused-events';
import { principalOf } from '../http/auth';
import { readCollectionRequest } from '../http/collection-auth';
import { BODY_PROBLEMS, invalidInput, problems, RETRY_AFTER_SECONDS, tooManyRequests, type ProblemError } from '../http/problem';
import type { Principal } from '../workspaces/workspace-store';
import {
  SEGMENT_MAX_BATCH_BYTES,
  SEGMENT_MAX_CALL_BYTES,
  SEGMENT_TYPES,
  SegmentAccepted,
  SegmentCall,
  segmentBatchBody,
  type SegmentType,
} from './model';
import { correctedTimestamp, missingFields, storableTime, toEventInput, type BatchDefaults, type SegmentMessage } from './segment-calls';
import { jsonText } from '../http/json-text';

export type SegmentRoutesDeps = Pick<EventRoutesDeps, 'store' | 'buffer' | 'clock' | 'maxEventsPerRequest' | 'metrics' | 'enrich'>;

/** Adds what the request tells to an event (EventRoutesDeps.enrich). */
type Enrich = (event: EventInput) => EventInput;

/** The short paths analytics.js (analytics-next) posts to, by call. */
const SHORT_NAMES = { batch: 'b', track: 't', identify: 'i', page: 'p', screen: 's', group: 'g', alias: 'a' } as const;

/** Every path of the Segment routes, the short ones included. */
export const SEGMENT_PATHS = Object.entries(SHORT_NAMES).flatMap(([call, short]) => [`/v1/${call}`, `/v1/${short}`]);

const ACCEPTED = '{"success":true}';

/** The path of each single call (`/v1/track`, `/v1/t`, ...) and its type. */
export const SEGMENT_CALL_PATHS: ReadonlyArray<readonly [string, SegmentType]> = SEGMENT_TYPES.flatMap((type) => [
  [`/v1/${type}`, type] as const,
  [`/v1/${SHORT_NAMES[type]}`, type] as const,
]);

/** Stores one validated call of `principal`, sent in a body of `bodyBytes`, as an event of `type`: the 200's JSON, or 400 naming what is missing. */
export function storeCall(deps: SegmentRoutesDeps, principal: Principal, bodyBytes: number, type: SegmentType, call: SegmentCall, enrich?: Enrich): Promise<string> {
  return ingest(deps, principal, bodyBytes, [{ ...call, type } as SegmentMessage], {}, () => '', enrich);
}

/** Segment's clients treat 429 with Retry-After as "slow down"; /events answers the same as 503. */
function asSegmentAnswer(err: unknown): unknown {
  return err instanceof IngestOverloadedError ? tooManyRequests(err.message, RETRY_AFTER_SECONDS) : err;
}

/**
 * Before validation: shed at once under overload, then Segment's size limit (400, as Segment
 * answers), then the key (which may be in the body) and the JSON, whatever its Content-Type.
 */
function readCall(deps: SegmentRoutesDeps, maxBytes: number) {
  const readRequest = readCollectionRequest(deps.store, 'any');
  return (ctx: { request: Request; body: unknown }) => {
    try {
      deps.buffer.admit();
    } catch (err) {
      throw asSegmentAnswer(err);
    }
    const bytes = bodyBytes(ctx.request);
    if (ctx.body instanceof RawBody && bytes > maxBytes) {
      throw invalidInput(`the body is ${bytes} bytes; the limit of this route is ${maxBytes}`, [{ pointer: '', detail: 'too large' }]);
    }
    readRequest(ctx.request, ctx.body, (body) => (ctx.body = body));
  };
}

/** Stores the calls as one atomic batch (answering the 200's JSON), or refuses them all with every problem listed. */
async function ingest(
  deps: SegmentRoutesDeps,
  principal: Principal,
  bodyBytes: number,
  calls: SegmentMessage[],
  batch: BatchDefaults,
  pointerOf: (i: number) => string,
  enrich?: Enrich,
): Promise<string> {
  const database = principal.workspace.databaseName;
  const errors: ProblemError[] = [];
  // No call is larger than the body that holds it: a small body needs no call measured.
  const measureCalls = bodyBytes > SEGMENT_MAX_CALL_BYTES;
  const timed = calls.map((call, i) => {
    errors.push(...missingFields(call, pointerOf(i)));
    const bytes = measureCalls ? Buffer.byteLength(JSON.stringify(call)) : 0;
    if (bytes > SEGMENT_MAX_CALL_BYTES) errors.push({ pointer: pointerOf(i), detail: `is ${bytes} bytes; the limit is ${SEGMENT_MAX_CALL_BYTES} per call` });
    const receivedAt = deps.clock.next();
    const timestamp = correctedTimestamp(call, batch.sentAt, receivedAt);
    if (!storableTime(timestamp)) errors.push({ pointer: `${pointerOf(i)}/timestamp`, detail: 'corrected by sentAt, falls outside the years 1900 to 2299' });
    return { call, receivedAt, timestamp };
  });
  if (errors.length > 0) throw invalidInput(`${errors.length} problem${errors.length === 1 ? '' : 's'} in the calls; nothing was stored`, errors);
  const accepted = timed.map(({ call, receivedAt, timestamp }) => {
    const input = toEventInput(call, batch);
    return acceptEvent(enrich ? enrich(input) : input, receivedAt, database, timestamp);
  });
  try {
    await deps.buffer.submit(database, accepted, 'segment');
  } catch (err) {
    throw asSegmentAnswer(err);
  }
  deps.metrics.eventsAccepted(database, accepted.length);
  return ACCEPTED;
}

const SECURITY: Array<Record<string, string[]>> = [{ bearer: [] }, { basic: [] }];

/**
 * The batch call at `path`: `/v1/batch`, or another path serving as it (analytics.js's `/v1/b`,
 * the tracker's collection path), left out of the OpenAPI document, which lists each route once.
 */
export function segmentBatchRoute(deps: SegmentRoutesDeps, path: string) {
  return new Elysia({ name: 'segment-batch', seed: path, normalize: false }).post(
    path,
    async ({ body, request, server }) =>
      jsonText(
        await ingest(
          deps,
          principalOf(request)!,
          bodyBytes(request),
          body.batch as SegmentMessage[],
          { context: body.context, integrations: body.integrations, sentAt: body.sentAt },
          (i) => `/batch/${i}`,
          deps.enrich?.(request, server),
        ),
      ),
    {
      transform: readCall(deps, SEGMENT_MAX_BATCH_BYTES),
      afterResponse: countRefusedEvents(deps.metrics, 200, 'batch'),
      body: segmentBatchBody(deps.maxEventsPerRequest),
      response: { 200: SegmentAccepted, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
      detail: {
        ...(path === '/v1/batch' ? {} : { hide: true }),
        tags: ['Segment'],
        summary: 'Send a batch of Segment calls',
        description: `Segment's batch call: up to ${SEGMENT_MAX_BATCH_BYTES / 1024} KB, each call up to ${SEGMENT_MAX_CALL_BYTES / 1024} KB. The batch's context and integrations merge into each call. Stored atomically; 200 once committed.`,
        security: SECURITY,
      },
    },
  );
}

/**
 * Segment's tracking API (`/v1/batch`, `/v1/track`, ...), so Segment's and RudderStack's SDKs
 * send here unchanged: the calls are stored as events, with the same columns as `POST /events`.
 * analytics.js's short paths (`/v1/t`, ...) serve the same routes, hidden from the OpenAPI document.
 */
export function segmentRoutes(deps: SegmentRoutesDeps) {
  const app = new Elysia({ name: 'segment', normalize: false }).use(segmentBatchRoute(deps, '/v1/batch')).use(segmentBatchRoute(deps, `/v1/${SHORT_NAMES.batch}`));
  for (const [path, type] of SEGMENT_CALL_PATHS) {
    app.post(path, async ({ body, request, server }) => jsonText(await storeCall(deps, principalOf(request)!, bodyBytes(request), type, body, deps.enrich?.(request, server))), {
      transform: readCall(deps, SEGMENT_MAX_CALL_BYTES),
      afterResponse: countRefusedEvents(deps.metrics, 200, 'batch'),
      body: SegmentCall,
      response: { 200: SegmentAccepted, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
      detail: {
        ...(path === `/v1/${type}` ? {} : { hide: true }),
        tags: ['Segment'],
        summary: `Send a Segment ${type} call`,
        description: `Stored as an event of type ${type}; 200 once it is in the ingest log.`,
        security: SECURITY,
      },
    });
  }
  return app;
}
