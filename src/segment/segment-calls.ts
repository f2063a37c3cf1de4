import { keptInProperties } from '../events/event-input';
import type { EventInput } from '../events/model';
import { parseIsoDateTime, type Micros } from '../timestamps';
import type { ProblemError } from '../http/problem';
import type { SegmentBatchItem, SegmentType } from './model';

/** A call as validated, with its type settled (from the batch item, or the path). */
export type SegmentMessage = Omit<SegmentBatchItem, 'type'> & { type: SegmentType };

/** What a batch says for all of its calls. */
export interface BatchDefaults {
  context?: Record<string, unknown>;
  integrations?: Record<string, unknown>;
  sentAt?: string;
}

const MIN_TIME = parseIsoDateTime('1900-01-01')!;
const MAX_TIME = parseIsoDateTime('2299-12-31T23:59:59.999999Z')!;

/** Fields a call must carry, by type, beyond a userId or an anonymousId, as Segment's spec has it. */
const REQUIRED: Partial<Record<SegmentType, ReadonlyArray<keyof SegmentMessage>>> = {
  track: ['event'],
  group: ['groupId'],
  alias: ['previousId', 'userId'],
};

/** What is missing from a call, as errors at `pointer` (the call's JSON Pointer). */
export function missingFields(message: SegmentMessage, pointer: string): ProblemError[] {
  const errors: ProblemError[] = [];
  if (message.userId === undefined && message.anonymousId === undefined) {
    errors.push({ pointer, detail: 'needs a userId or an anonymousId' });
  }
  for (const field of REQUIRED[message.type] ?? []) {
    if (message[field] === undefined) errors.push({ pointer: `${pointer}/${field}`, detail: `is required in ${message.type} calls` });
  }
  return errors;
}

/**
 * Segment's clock-skew rule: a device's clock may be wrong, but the time between its
 * `originalTimestamp` (or `timestamp`) and its `sentAt` is right, so the event happened that long
 * before the service received it. Without `sentAt`, the client's time as it is; without either,
 * the time of receipt.
 */
export function correctedTimestamp(message: SegmentMessage, batchSentAt: string | undefined, receivedAt: Micros): Micros {
  const original = message.originalTimestamp ?? message.timestamp;
  if (original === undefined) return receivedAt;
  const happened = parseIsoDateTime(original)!;
  const sentAt = message.sentAt ?? batchSentAt;
  return sentAt === undefined ? happened : receivedAt - (parseIsoDateTime(sentAt)! - happened);
}

/** Whether a corrected time can be stored (DateTime64 covers 1900 to 2299). */
export const storableTime = (t: Micros) => t >= MIN_TIME && t <= MAX_TIME;

const objectOrUndefined = (value: unknown) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** `fields` without those that are undefined. */
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key in fields) if (fields[key] !== undefined) kept[key] = fields[key];
  return kept;
}

/**
 * A call as the service stores it: the same columns as `POST /events`. Page and screen names
 * (and a page's category) and an alias's previousId go into `properties`; the batch's `context`
 * and `integrations` merge into the call's (the call's keys win), and `integrations`, which
 * has no column, is kept as `context.integrations`. An identify call without `traits` takes
 * `context.traits`, where RudderStack's JavaScript SDK puts them, so SQL finds them in `traits`.
 * Its timestamp, corrected for the device's clock (`correctedTimestamp`), is given beside it.
 */
export function toEventInput(message: SegmentMessage, batch: BatchDefaults): EventInput {
  const properties = keptInProperties(message.properties, { name: message.name, category: message.category, previousId: message.previousId });
  const integrations = batch.integrations || message.integrations ? { ...batch.integrations, ...message.integrations } : undefined;
  // A call's own context, when nothing merges into it, is taken as it is (most calls).
  const merged = batch.context || integrations ? { ...batch.context, ...message.context, ...defined({ integrations }) } : message.context;
  return defined({
    type: message.type,
    messageId: message.messageId,
    event: message.type === 'track' ? message.event : undefined,
    userId: message.userId,
    anonymousId: message.anonymousId,
    groupId: message.groupId,
    properties,
    traits: message.traits ?? (message.type === 'identify' ? objectOrUndefined(merged?.traits) : undefined),
    context: merged,
  }) as EventInput;
}
