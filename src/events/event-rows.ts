import { parseJsonLossless } from '../lossless-json';
import type { Row } from '../storage/storage';
import type { Event, EventDTO } from './model';
import { engineToIso, toEngineDateTime, toIsoString, type Micros, parseIsoDateTime } from './timestamps';

const TEXT_FIELDS = ['event', 'userId', 'anonymousId', 'groupId', 'instanceId'] as const;
const OBJECT_FIELDS = ['properties', 'traits', 'context'] as const;

/** The columns of `events`, in table order; also the SELECT list of the listing. */
export const EVENT_COLUMNS = ['uuid', 'type', ...TEXT_FIELDS, ...OBJECT_FIELDS, 'timestamp', 'parsedAt'] as const;

/** An accepted event: the row to insert and the Event to answer with. */
export interface AcceptedEvent {
  row: Row;
  event: Event;
}

/** Assigns the uuid and times of a validated event. Absent fields are stored as ''. */
export function acceptEvent(dto: EventDTO, parsedAt: Micros): AcceptedEvent {
  const uuid = crypto.randomUUID();
  const timestamp = dto.timestamp === undefined ? parsedAt : parseIsoDateTime(dto.timestamp)!;
  const row: Row = { uuid, type: dto.type };
  const event: Record<string, unknown> = { uuid, type: dto.type };
  for (const f of TEXT_FIELDS) {
    const v = dto[f];
    row[f] = v ?? '';
    if (v !== undefined) event[f] = v;
  }
  for (const f of OBJECT_FIELDS) {
    const v = dto[f];
    row[f] = v === undefined ? '' : JSON.stringify(v);
    if (v !== undefined) event[f] = v;
  }
  row.timestamp = toEngineDateTime(timestamp);
  row.parsedAt = toEngineDateTime(parsedAt);
  event.timestamp = toIsoString(timestamp);
  event.parsedAt = toIsoString(parsedAt);
  return { row, event: event as Event };
}

/** A stored row back to the API's Event: '' means absent, object columns become objects. */
export function rowToEvent(row: Row): Event {
  const event: Record<string, unknown> = { uuid: row.uuid, type: row.type };
  for (const f of TEXT_FIELDS) if (row[f] !== '') event[f] = row[f];
  for (const f of OBJECT_FIELDS) if (row[f] !== '') event[f] = parseJsonLossless(String(row[f]));
  event.timestamp = engineToIso(String(row.timestamp));
  event.parsedAt = engineToIso(String(row.parsedAt));
  return event as Event;
}
