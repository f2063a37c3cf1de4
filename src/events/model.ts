import { FormatRegistry } from '@sinclair/typebox';
import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';
import { parseIsoDateTime } from '../timestamps';

FormatRegistry.Set('iso-date-time', (value) => parseIsoDateTime(value) !== undefined);

const ISO_DATE_TIME_ERROR = 'must be an ISO 8601 date-time between 1900 and 2299, such as 2024-01-31T12:00:00Z';

/** The types `POST /events` accepts: the interface's four. */
export const EVENT_TYPES = ['page', 'track', 'identify', 'group'] as const;
/** The types stored: the Segment-compatible routes also take `screen` and `alias` calls. */
export const STORED_EVENT_TYPES = [...EVENT_TYPES, 'screen', 'alias'] as const;
export type StoredEventType = (typeof STORED_EVENT_TYPES)[number];

export const literalUnion = <T extends string>(values: readonly T[], description?: string) =>
  t.Union(values.map((v) => t.Literal(v)), { error: `must be one of ${values.join(', ')}`, ...(description ? { description } : {}) });

export const EventType = literalUnion(EVENT_TYPES);
const StoredEventType = literalUnion(STORED_EVENT_TYPES);

/** Longest `messageId` kept: each one is remembered in memory for de-duplication. */
export const MAX_MESSAGE_ID_LENGTH = 200;

export const IsoDateTime = t.String({ format: 'iso-date-time', error: ISO_DATE_TIME_ERROR, examples: ['2024-01-31T12:00:00Z'] });
// Any object: a Record of String keys would test each key against a pattern that takes every key.
export const JsonObject = t.Unsafe<Record<string, unknown>>(t.Object({}, { additionalProperties: true, error: 'must be a JSON object' }));
export const Text = t.String({ error: 'must be a string' });
export const MessageId = t.String({
  minLength: 1,
  maxLength: MAX_MESSAGE_ID_LENGTH,
  error: `must be a string of 1 to ${MAX_MESSAGE_ID_LENGTH} characters`,
  description: 'The client\'s id of this message: a message whose id was stored within the de-duplication window (24 hours by default) is acknowledged and not stored again.',
  examples: ['ajs-next-1732270800000-6d2a0e44-2d6f-4b8e-9a57-4f6f4b0b1c1e'],
});

/** A public key in the body: for beacons, which cannot set an Authorization header. */
export const WriteKey = t.String({ error: 'must be a string', description: 'A public key, when no Authorization header is sent (beacons cannot set one).' });

/**
 * An event as sent. A `track` needs `event` (checked with the batch: event-input.ts); a page's
 * `name` and `category` are kept in its properties. Other Segment fields (`sentAt`,
 * `integrations`, ...) are accepted and ignored.
 */
export const EventDTO = t.Object(
  {
    type: EventType,
    messageId: t.Optional(MessageId),
    event: t.Optional(t.String({ error: 'must be a string', description: 'What happened: required in `track` events.' })),
    name: t.Optional(t.String({ error: 'must be a string', description: "A page's name, kept as `properties.name` (as the Segment routes keep it)." })),
    category: t.Optional(t.String({ error: 'must be a string', description: "A page's category, kept as `properties.category`." })),
    userId: t.Optional(Text),
    anonymousId: t.Optional(Text),
    groupId: t.Optional(Text),
    instanceId: t.Optional(Text),
    timestamp: t.Optional(IsoDateTime),
    properties: t.Optional(JsonObject),
    traits: t.Optional(JsonObject),
    context: t.Optional(JsonObject),
  },
  { additionalProperties: true, error: 'must be an event object' },
);
export type EventDTO = typeof EventDTO.static;

/** What is stored of an event as sent, whichever route took it. */
export type EventInput = Omit<EventDTO, 'type'> & { type: StoredEventType };

export function createEventsBody(maxEvents: number) {
  return t.Object(
    {
      events: t.Array(EventDTO, {
        minItems: 1,
        maxItems: maxEvents,
        error: `must be an array of 1 to ${maxEvents} events`,
      }),
      writeKey: t.Optional(WriteKey),
    },
    {
      examples: [
        {
          events: [
            { type: 'identify', userId: 'u1', traits: { email: 'ada@example.com', plan: 'pro' } },
            { type: 'track', event: 'signup', userId: 'u1', properties: { source: 'ad' }, messageId: 'm-1', timestamp: '2024-05-01T12:00:00Z' },
          ],
        },
      ],
    },
  );
}

/** An event as stored and returned. Fields absent on input are absent here too. */
export const Event = t.Object({
  uuid: t.String({ format: 'uuid' }),
  type: t.String(),
  messageId: t.Optional(t.String()),
  event: t.Optional(t.String()),
  userId: t.Optional(t.String()),
  anonymousId: t.Optional(t.String()),
  groupId: t.Optional(t.String()),
  instanceId: t.Optional(t.String()),
  properties: t.Optional(t.Record(t.String(), t.Unknown())),
  traits: t.Optional(t.Record(t.String(), t.Unknown())),
  context: t.Optional(t.Record(t.String(), t.Unknown())),
  timestamp: t.String({ format: 'date-time' }),
  parsedAt: t.String({ format: 'date-time' }),
});
export type Event = typeof Event.static;

export const EventsPage = Page(Event);
export type EventsPage = typeof EventsPage.static;

/** Fields `orderByField` may name: the scalar columns. */
export const ORDER_FIELDS = ['timestamp', 'parsedAt', 'uuid', 'type', 'event', 'userId', 'anonymousId', 'groupId', 'instanceId'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];

/**
 * `GET /events` parameters. Besides these, `properties.<key>`, `traits.<key>` and
 * `context.<key>` filter on a top-level key of those objects.
 */
export const ListEventsQuery = t.Object(
  {
    event: t.Optional(Text),
    uuid: t.Optional(t.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', error: 'must be a UUID' })),
    userId: t.Optional(Text),
    groupId: t.Optional(Text),
    anonymousId: t.Optional(Text),
    instanceId: t.Optional(Text),
    type: t.Optional(StoredEventType),
    messageId: t.Optional(Text),
    startDate: t.Optional(IsoDateTime),
    endDate: t.Optional(IsoDateTime),
    ...PageParams,
    orderByField: t.Optional(t.Union(ORDER_FIELDS.map((f) => t.Literal(f)), { error: `must be one of ${ORDER_FIELDS.join(', ')}` })),
    orderByDirection: t.Optional(t.String({ pattern: '^(?:[Aa][Ss][Cc]|[Dd][Ee][Ss][Cc])$', error: 'must be ASC or DESC' })),
  },
  { additionalProperties: true },
);
export type ListEventsQuery = typeof ListEventsQuery.static;

/** `GET /events/stream` filters: equality, as in `GET /events`; a misspelt one is refused. */
export const StreamEventsQuery = t.Object(
  { type: t.Optional(StoredEventType), event: t.Optional(Text), userId: t.Optional(Text) },
  { additionalProperties: false },
);
export type StreamEventsQuery = typeof StreamEventsQuery.static;
