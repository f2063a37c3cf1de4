import { t } from 'elysia';
import { IsoDateTime, JsonObject, literalUnion, MessageId, Text, WriteKey } from '../events/model';

/** The calls of Segment's tracking API, each stored under its own type. */
export const SEGMENT_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;
export type SegmentType = (typeof SEGMENT_TYPES)[number];

const SegmentTypeSchema = literalUnion(SEGMENT_TYPES);

/** Segment's limits: one call, and one request to `/v1/batch`. */
export const SEGMENT_MAX_CALL_BYTES = 32 * 1024;
export const SEGMENT_MAX_BATCH_BYTES = 500 * 1024;

/** The fields of a call, as Segment's spec names them; others are accepted and not stored. */
const callFields = {
  messageId: t.Optional(MessageId),
  userId: t.Optional(Text),
  anonymousId: t.Optional(Text),
  event: t.Optional(Text),
  name: t.Optional(Text),
  category: t.Optional(Text),
  groupId: t.Optional(Text),
  previousId: t.Optional(Text),
  timestamp: t.Optional(IsoDateTime),
  originalTimestamp: t.Optional(IsoDateTime),
  sentAt: t.Optional(IsoDateTime),
  properties: t.Optional(JsonObject),
  traits: t.Optional(JsonObject),
  context: t.Optional(JsonObject),
  integrations: t.Optional(JsonObject),
};

/** An item of `/v1/batch`: its `type` says which call it is. */
export const SegmentBatchItem = t.Object({ type: SegmentTypeSchema, ...callFields }, { additionalProperties: true, error: 'must be a call object' });

/** A call to `/v1/<type>`: the path says which call it is. */
export const SegmentCall = t.Object(
  { type: t.Optional(t.String()), ...callFields, writeKey: t.Optional(WriteKey) },
  {
    additionalProperties: true,
    error: 'must be a call object',
    examples: [{ userId: 'u1', event: 'Order Completed', properties: { revenue: 42.5 }, messageId: 'ajs-next-1', timestamp: '2026-11-22T10:00:00.000Z' }],
  },
);
export type SegmentCall = typeof SegmentCall.static;

export function segmentBatchBody(maxCalls: number) {
  return t.Object(
    {
      batch: t.Array(SegmentBatchItem, { minItems: 1, maxItems: maxCalls, error: `must be an array of 1 to ${maxCalls} calls` }),
      context: t.Optional(JsonObject),
      integrations: t.Optional(JsonObject),
      sentAt: t.Optional(IsoDateTime),
      writeKey: t.Optional(WriteKey),
    },
    {
      additionalProperties: true,
      examples: [
        {
          batch: [
            { type: 'identify', userId: 'u1', traits: { plan: 'pro' }, messageId: 'm-1', timestamp: '2026-11-22T10:00:00.000Z' },
            { type: 'track', userId: 'u1', event: 'Signed Up', messageId: 'm-2', timestamp: '2026-11-22T10:00:01.000Z' },
          ],
          context: { library: { name: 'analytics-node', version: '3.1.0' } },
          sentAt: '2026-11-22T10:00:02.000Z',
        },
      ],
    },
  );
}
export type SegmentBatchBody = ReturnType<typeof segmentBatchBody>['static'];
export type SegmentBatchItem = typeof SegmentBatchItem.static;

/** Segment's answer to an accepted call or batch. */
export const SegmentAccepted = t.Object({ success: t.Literal(true) }, { examples: [{ success: true }] });
