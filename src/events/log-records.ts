import { parseJsonLossless } from '../lossless-json';
import { lineText } from '../storage/storage';
import { parseIsoDateTime } from '../timestamps';
import type { AcceptedEvent } from './event-rows';
import type { Event } from './model';

const NEWLINE = 0x0a;

/**
 * The payload of one ingest-log record: the events one request stored in one database, as the
 * database name and the events' rows (their JSON, which is also their insert line), a line each,
 * in UTF-8. A database name holds no newline (it is a strict identifier, ASCII), nor does compact JSON.
 * Encoded once: the log writes these bytes and the loader inserts its rows' part as it is.
 */
export function encodeEventsRecord(database: string, events: readonly AcceptedEvent[]): Buffer {
  return Buffer.from(events.length === 1 ? `${database}\n${events[0]!.json}` : `${database}\n${events.map((e) => e.json).join('\n')}`);
}

/** What replay needs of a record: its rows as they are, how many, and its first event (an insert holds all or none). */
export interface RecordHead {
  database: string;
  lines: Uint8Array;
  rows: number;
  first: AcceptedEvent;
}

/** The database a record's payload names. */
const databaseOf = (payload: Uint8Array): string => lineText(payload.subarray(0, payload.indexOf(NEWLINE)));

/** The events' rows of a record of `database`, joined by newlines: its insert lines, as bytes. */
export const linesOf = (payload: Uint8Array, database: string): Uint8Array => payload.subarray(database.length + 1);

/** A record's head, parsing its first event only. */
export function decodeRecordHead(payload: Uint8Array): RecordHead {
  const database = databaseOf(payload);
  const lines = linesOf(payload, database);
  const end = lines.indexOf(NEWLINE);
  let rows = 1;
  for (let at = end; at !== -1; at = lines.indexOf(NEWLINE, at + 1)) rows++;
  return { database, lines, rows, first: acceptedEventOf(lineText(end === -1 ? lines : lines.subarray(0, end))) };
}

/** The events of a record's rows (`linesOf`). */
export function decodeEventLines(lines: Uint8Array): AcceptedEvent[] {
  return lineText(lines).split('\n').map(acceptedEventOf);
}

/** An event as accepted, from its row's JSON. */
function acceptedEventOf(json: string): AcceptedEvent {
  const event = parseJsonLossless(json) as Event;
  return { json, event, parsedAt: parseIsoDateTime(event.parsedAt)! };
}
