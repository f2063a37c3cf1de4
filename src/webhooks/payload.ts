import { createHash, createHmac } from 'node:crypto';
import type { Event } from '../events/model';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A signing secret as the Standard Webhooks specification has it: `whsec_` and base64 of random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString('base64');
}

/**
 * The `webhook-id` of a delivery: the same on every retry, and the same again after a restart
 * when the same events are sent together, so receivers can drop what they already have.
 */
export function deliveryId(events: readonly Event[]): string {
  if (events.length === 1) return `msg_${events[0]!.uuid}`;
  const digest = createHash('sha256').update(events.map((e) => e.uuid).join(',')).digest('base64url');
  return `msg_${digest.slice(0, 32)}`;
}

/**
 * One level of keys joined with `_`, array items by index (`data_0_properties_plan`), as Trench
 * flattens payloads; an empty object or array stays as it is. A number kept exactly (JSON.rawJSON)
 * is a value, not an object to descend into.
 */
export function flattenPayload(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const isRaw = (JSON as unknown as { isRawJSON(v: unknown): boolean }).isRawJSON;
  const visit = (node: unknown, key: string): void => {
    if (node === null || typeof node !== 'object' || isRaw(node)) {
      out[key] = node;
      return;
    }
    const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
    if (entries.length === 0 && key) out[key] = Array.isArray(node) ? [] : {};
    for (const [k, v] of entries) visit(v, key ? `${key}_${k}` : k);
  };
  visit(value, '');
  return out;
}

/** The request body: `{ "data": [Event...] }`, flattened when the webhook asks for it. */
export function payloadBody(events: readonly Event[], flatten: boolean): string {
  const payload = { data: events };
  return JSON.stringify(flatten ? flattenPayload(payload) : payload);
}

/**
 * Standard Webhooks headers: `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body`, keyed with the secret's decoded bytes.
 */
export function signedHeaders(secret: string, id: string, body: string, timestampSeconds: number): Record<string, string> {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
