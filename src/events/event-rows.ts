import { createHash } from 'node:crypto';
import { parseJsonLossless } from '../lossless-json';
import type { Row } from '../storage/storage';
import type { Event, EventInput } from './model';
import { engineToIso, toIsoString, type Micros, parseIsoDateTime } from '../timestamps';

const TEXT_FIELDS = ['messageId', 'event', 'userId', 'anonymousId', 'groupId', 'instanceId'] as const;
const OBJECT_FIELDS = ['properties', 'traits', 'context'] as const;

/** The columns of `events`, in table order; also the SELECT list of the listing. */
export const EVENT_COLUMNS = ['uuid', 'type', ...TEXT_FIELDS, ...OBJECT_FIELDS, 'timestamp', 'parsedAt'] as const;

/**
 * An accepted event and its JSON, made once: the JSON is both its row in the insert (absent
 * fields take the column default '', objects are stored as their JSON text) and its entry in
 * the 201 answer.
 */
export interface AcceptedEvent {
  event: Event;
  json: string;
  /** `event.parsedAt`, as a number. */
  parsedAt: Micros;
}

/**
 * The uuid of a message sent with a `messageId`: derived from it (a name-based UUID, version 5
 * layout over SHA-1), so that a repeat answers with the uuid of the copy that was stored.
 */
export function messageUuid(database: string, messageId: string): string {
  const h = createHash('sha1').update(database).update('\n').update(messageId).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Assigns the uuid and times of a validated event bound for `database`: its timestamp is the
 * one given (a Segment call's, corrected), else its own, else `parsedAt`.
 */
export function acceptEvent(dto: EventInput, parsedAt: Micros, database: string, given?: Micros): AcceptedEvent {
  const timestamp = given ?? (dto.timestamp === undefined ? parsedAt : parseIsoDateTime(dto.timestamp)!);
  const uuid = dto.messageId === undefined ? crypto.randomUUID() : messageUuid(database, dto.messageId);
  const event: Record<string, unknown> = { uuid, type: dto.type };
  for (const f of TEXT_FIELDS) if (dto[f] !== undefined) event[f] = dto[f];
  for (const f of OBJECT_FIELDS) if (dto[f] !== undefined) event[f] = dto[f];
  const parsedAtIso = toIsoString(parsedAt);
  event.timestamp = timestamp === parsedAt ? parsedAtIso : toIsoString(timestamp);
  event.parsedAt = parsedAtIso;
  return { event: event as Event, json: JSON.stringify(event), parsedAt };
}

/** SQL for a DateTime64(6) as the API writes it: ISO 8601 in UTC, milliseconds unless finer. */
const isoSql = (column: string) => {
  const micros = `formatDateTime(${column}, '%f')`;
  return `formatDateTime(${column}, '%Y-%m-%dT%H:%i:%S'), '.', if(endsWith(${micros}, '000'), substring(${micros}, 1, 3), ${micros}), 'Z'`;
};

/**
 * SQL for a stored row as the API's Event in JSON text, made by the engine for a page of up to
 * 1,000 events. The object columns hold JSON text the service wrote and go in as they are
 * (numbers exactly as sent); '' means absent, as in `rowToEvent`.
 */
export const EVENT_JSON_SQL = `concat('{"uuid":"', toString(uuid), '","type":', toJSONString(type),
  ${TEXT_FIELDS.map((f) => `if(${f} = '', '', concat(',"${f}":', toJSONString(${f})))`).join(', ')},
  ${OBJECT_FIELDS.map((f) => `if(${f} = '', '', concat(',"${f}":', ${f}))`).join(', ')},
  ',"timestamp":"', ${isoSql('timestamp')}, '","parsedAt":"', ${isoSql('parsedAt')}, '"}')`;

/** A stored row back to the API's Event: '' means absent, object columns become objects. */
export function rowToEvent(row: Row): Event {
  const event: Record<string, unknown> = { uuid: row.uuid, type: row.type };
  for (const f of TEXT_FIELDS) if (row[f] !== '') event[f] = row[f];
  for (const f of OBJECT_FIELDS) if (row[f] !== '') event[f] = parseJsonLossless(String(row[f]));
  event.timestamp = engineToIso(String(row.timestamp));
  event.parsedAt = engineToIso(String(row.parsedAt));
  return event as Event;
}
