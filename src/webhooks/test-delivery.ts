import type { Event } from '../events/model';
import { nowMicros, toIsoString } from '../events/timestamps';
import { WILDCARD, type TestDelivery } from './model';
import { sendOnce } from './sender';
import type { WebhookRecord } from './webhook-records';

/** The event a test sends: of a type and name the webhook takes, marked as a test, never stored. */
export function testEvent(record: WebhookRecord): Event {
  const now = toIsoString(nowMicros());
  const type = record.webhook.eventTypes.find((t) => t !== WILDCARD) ?? 'track';
  const event = record.webhook.eventNames.find((n) => n !== WILDCARD) ?? 'webhook.test';
  return {
    uuid: crypto.randomUUID(),
    type,
    event,
    userId: 'webhook-test',
    properties: { test: true, note: 'sent by POST /webhooks/{uuid}/test; this event is not stored' },
    timestamp: now,
    parsedAt: now,
  };
}

/**
 * One attempt, now, with the webhook's URL, secret and flattening, outside its queue: not
 * retried, not recorded. What the receiver answered is reduced to its status and a class of
 * failure, so the route cannot be used to read what an address serves.
 */
export async function sendTestEvent(record: WebhookRecord, timeoutMs: number): Promise<TestDelivery> {
  const event = testEvent(record);
  const started = performance.now();
  const target = { url: record.webhook.url, secret: record.secret, flatten: record.webhook.flatten };
  const outcome = await sendOnce(target, `msg_test_${event.uuid}`, [event], timeoutMs, new AbortController().signal);
  const ms = Math.round(performance.now() - started);
  if (outcome.ok) return { delivered: true, statusCode: outcome.statusCode, error: null, ms, event };
  const error =
    outcome.statusCode !== 0 ? `the receiver answered HTTP ${outcome.statusCode}` : outcome.error.startsWith('no answer') ? `no answer within ${timeoutMs} ms` : 'the request failed: no connection could be made';
  return { delivered: false, statusCode: outcome.statusCode || null, error, ms, event };
}
