import { FormatRegistry } from '@sinclair/typebox';
import { t } from 'elysia';
import { Page, PageParams } from '../http/pagination';
import { parseIsoDateTime } from './timestamps';

FormatRegistry.Set('iso-date-time', (value) => parseIsoDateTime(value) !== undefined);

const ISO_DATE_TIME_ERROR = 'must be an ISO 8601 date-time between 1900 and 2299, such as 2024-01-31T12:00:00Z';

export const EVENT_TYPES = ['page', 'track', 'identify', 'group'] as const;

export const EventType = t.Union(
  EVENT_TYPES.map((v) => t.Literal(v)),
  { error: `must be one of ${EVENT_TYPES.join(', ')}` },
);

const IsoDateTime = t.String({ format: 'iso-date-time', error: ISO_DATE_TIME_ERROR, examples: ['2024-01-31T12:00:00Z'] });
const JsonObject = t.Record(t.String(), t.Unknown(), { error: 'must be a JSON object' });
const Text = t.String({ error: 'must be a string' });

/** An event as sent. Other Segment fields (`messageId`, `sentAt`, ...) are accepted and ignored. */
export const EventDTO = t.Object(
  {
    type: EventType,
    event: t.Optional(Text),
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

export function createEventsBody(maxEvents: number) {
  return t.Object({
    events: t.Array(EventDTO, {
      minItems: 1,
      maxItems: maxEvents,
      error: `must be an array of 1 to ${maxEvents} events`,
    }),
  });
}

/** An event as stored and returned. Fields absent on input are absent here too. */
export const Event = t.Object({
  uuid: t.String({ format: 'uuid' }),
  type: t.String(),
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
    type: t.Optional(EventType),
    startDate: t.Optional(IsoDateTime),
    endDate: t.Optional(IsoDateTime),
    ...PageParams,
    orderByField: t.Optional(t.Union(ORDER_FIELDS.map((f) => t.Literal(f)), { error: `must be one of ${ORDER_FIELDS.join(', ')}` })),
    orderByDirection: t.Optional(t.String({ pattern: '^(?:[Aa][Ss][Cc]|[Dd][Ee][Ss][Cc])$', error: 'must be ASC or DESC' })),
  },
  { additionalProperties: true },
);
export type ListEventsQuery = typeof ListEventsQuery.static;
