import type { Event } from '../events/model';
import type { EgressPolicy } from '../net/egress-policy';
import { nowMicros, toIsoString } from '../timestamps';
import { WILDCARD, type TestDelivery } from './model';
import { sendOnce } from './sender';
import type { WebhookRecord } from './webhook-records';

/** The event a test sends: of a type and name the webhook takes, marked as a test, never stored. */
function testEvent(record: WebhookRecord): Event {
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
 * retried, not recorded. Like any delivery it goes through the egress policy, and its outcome
 * says only the status or a class of failure (sender.ts), never what the receiver sent.
 */
export async function sendTestEvent(record: WebhookRecord, timeoutMs: number, egress: EgressPolicy, log: (details: string) => void): Promise<TestDelivery> {
  const event = testEvent(record);
  const target = { url: record.webhook.url, secret: record.secret, flatten: record.webhook.flatten };
  const started = performance.now();
  const outcome = await sendOnce(target, `msg_test_${event.uuid}`, [event], timeoutMs, new AbortController().signal, egress, log);
  const ms = Math.round(performance.now() - started);
  if (outcome.ok) return { delivered: true, statusCode: outcome.statusCode, error: null, ms, event };
  return { delivered: false, statusCode: outcome.statusCode || null, error: outcome.error, ms, event };
}
