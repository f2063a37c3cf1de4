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

/** What replay needs of a record: its rows as they are, how many, and its first event (an insert holds all or none). */
export interface RecordHead {
  database: string;
  lines: string;
  rows: number;
  first: AcceptedEvent;
}

/** A record's head, parsing its first event only. */
export function decodeRecordHead(payload: Uint8Array): RecordHead {
  const text = recordText(payload);
  const database = text.slice(0, text.indexOf('\n'));
  const lines = linesOf(text, database);
  const end = lines.indexOf('\n');
  let rows = 1;
  for (let at = end; at !== -1; at = lines.indexOf('\n', at + 1)) rows++;
  return { database, lines, rows, first: acceptedEventOf(end === -1 ? lines : lines.slice(0, end)) };
}

/** The events' rows of a record's text, as `EventsRecord.lines`. */
export const linesOf = (record: string, database: string) => record.slice(database.length + 1);

export function decodeEventsRecord(payload: Uint8Array | string): EventsRecord {
  const text = typeof payload === 'string' ? payload : recordText(payload);
  const [database, ...lines] = text.split('\n');
  return { database: database!, lines: linesOf(text, database!), events: lines.map(acceptedEventOf) };
}

const recordText = (payload: Uint8Array) => Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');

/** An event as accepted, from its row's JSON. */
function acceptedEventOf(json: string): AcceptedEvent {
  const event = parseJsonLossless(json) as Event;
  return { json, event, parsedAt: parseIsoDateTime(event.parsedAt)! };
}
