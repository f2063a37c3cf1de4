import { parseJsonLossless } from '../lossless-json';
import { parseIsoDateTime } from '../timestamps';
import type { AcceptedEvent } from './event-rows';
import type { Event } from './model';

/**
 * The payload of one ingest-log record: the events one request stored in one database, as the
 * database name and the events' rows (their JSON, which is also their insert line), a line each.
 * A database name holds no newline (it is a strict identifier), nor does compact JSON.
 */
export function encodeEventsRecord(database: string, events: readonly AcceptedEvent[]): string {
  return events.length === 1 ? `${database}\n${events[0]!.json}` : `${database}\n${events.map((e) => e.json).join('\n')}`;
}

export interface EventsRecord {
  database: string;
  events: AcceptedEvent[];
  /** The events' JSON lines, joined by newlines: their rows for an insert. */
  lines: string;
}

/** The events' rows of a record's text, as `EventsRecord.lines`. */
export const linesOf = (record: string, database: string) => record.slice(database.length + 1);

export function decodeEventsRecord(payload: Uint8Array | string): EventsRecord {
  const text = typeof payload === 'string' ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  const [database, ...lines] = text.split('\n');
  return {
    database: database!,
    lines: linesOf(text, database!),
    events: lines.map((json) => {
      const event = parseJsonLossless(json) as Event;
      return { json, event, parsedAt: parseIsoDateTime(event.parsedAt)! };
    }),
  };
}
