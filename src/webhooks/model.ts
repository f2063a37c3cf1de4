import { FormatRegistry } from '@sinclair/typebox';
import { t } from 'elysia';
import { Event, STORED_EVENT_TYPES } from '../events/model';
import { Page, PageParams } from '../http/pagination';

/** Most entries in `eventTypes` or `eventNames`. */
const MAX_FILTER_ITEMS = 100;
const MAX_URL_LENGTH = 2048;
/** Matches every event type or every event name. */
export const WILDCARD = '*';

FormatRegistry.Set('http-url', (value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
});

const EventTypeOrWildcard = t.Union([...STORED_EVENT_TYPES, WILDCARD].map((v) => t.Literal(v)), {
  error: `must be one of ${STORED_EVENT_TYPES.join(', ')} or *`,
});

/** `WebhookDTO`: what POST /webhooks takes. */
export const WebhookInput = t.Object(
  {
    url: t.String({ format: 'http-url', maxLength: MAX_URL_LENGTH, error: 'must be an absolute http:// or https:// URL', examples: ['https://example.com/hooks/analytics'] }),
    enableBatching: t.Optional(t.Boolean({ default: false, error: 'must be true or false' })),
    eventTypes: t.Optional(
      t.Array(EventTypeOrWildcard, { minItems: 1, maxItems: MAX_FILTER_ITEMS, default: [WILDCARD], error: `must be 1 to ${MAX_FILTER_ITEMS} of ${STORED_EVENT_TYPES.join(', ')} or *` }),
    ),
    eventNames: t.Optional(
      t.Array(t.String({ minLength: 1, maxLength: 200, error: 'must be an event name of 1 to 200 characters' }), {
        minItems: 1,
        maxItems: MAX_FILTER_ITEMS,
        default: [WILDCARD],
        error: `must be 1 to ${MAX_FILTER_ITEMS} event names (1 to 200 characters each) or *`,
      }),
    ),
    flatten: t.Optional(t.Boolean({ default: false, error: 'must be true or false' })),
  },
  { additionalProperties: false, examples: [{ url: 'https://example.com/hooks/analytics', eventTypes: ['track'], eventNames: ['signup', 'purchase'] }] },
);
export type WebhookInput = typeof WebhookInput.static;

export const Webhook = t.Object({
  uuid: t.String({ format: 'uuid' }),
  url: t.String(),
  enableBatching: t.Boolean(),
  createdAt: t.String({ format: 'date-time' }),
  eventTypes: t.Array(t.String()),
  eventNames: t.Array(t.String()),
  flatten: t.Boolean(),
});
export type Webhook = typeof Webhook.static;

/** A new webhook with its signing secret, shown this once. */
export const CreatedWebhook = t.Composite([
  Webhook,
  t.Object({ secret: t.String({ description: 'whsec_ and base64 of 32 random bytes; signs every delivery (Standard Webhooks)' }) }),
]);
export type CreatedWebhook = typeof CreatedWebhook.static;

export const WebhooksPage = Page(Webhook);

export const WebhookUuidParams = t.Object({ uuid: t.String() });

export const DELIVERY_STATUSES = ['retrying', 'failed', 'succeeded'] as const;
const DeliveryStatus = t.UnionEnum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
export type DeliveryStatus = typeof DeliveryStatus.static;

/** A delivery that needed more than one attempt: failed, being retried, or recovered. */
export const Delivery = t.Object({
  id: t.String({ description: 'The webhook-id header of every attempt' }),
  status: DeliveryStatus,
  eventUuids: t.Array(t.String()),
  attempts: t.Number(),
  lastStatusCode: t.Union([t.Number(), t.Null()], { description: 'null when no HTTP answer came' }),
  lastError: t.String(),
  firstAttemptAt: t.String({ format: 'date-time' }),
  lastAttemptAt: t.String({ format: 'date-time' }),
  nextAttemptAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  holdsQueue: t.Boolean({ description: 'true while later events wait for this delivery' }),
});
export type Delivery = typeof Delivery.static;

export const DeliveriesPage = Page(Delivery);

// A pattern rather than the enum: Elysia fills an absent enum query parameter with its first value.
export const ListDeliveriesQuery = t.Object(
  { ...PageParams, status: t.Optional(t.String({ pattern: `^(?:${DELIVERY_STATUSES.join('|')})$`, error: `must be one of ${DELIVERY_STATUSES.join(', ')}` })) },
  { additionalProperties: false },
);

export const ListWebhooksQuery = t.Object(PageParams, { additionalProperties: false });

/** What `POST /webhooks/{uuid}/test` answers: how one attempt with a synthetic event went. */
export const TestDelivery = t.Object({
  delivered: t.Boolean({ description: 'true when the receiver answered 2xx' }),
  statusCode: t.Union([t.Number(), t.Null()], { description: 'null when no HTTP answer came' }),
  error: t.Union([t.String(), t.Null()], { description: 'The class of failure (a status, a timeout, no connection); never what the receiver sent' }),
  ms: t.Number({ description: 'How long the attempt took' }),
  event: Event,
});
export type TestDelivery = typeof TestDelivery.static;
