import { EVENT_COLUMNS, rowToEvent } from '../events/event-rows';
import type { Event } from '../events/model';
import { parseIsoDateTime, toEngineDateTime } from '../timestamps';
import { identifier, type Params, type Storage } from '../storage/storage';
import { WILDCARD, type Webhook } from './model';
import type { Cursor } from './webhook-records';

/** Whether a webhook wants an event: its type and its name each match, `*` matching all. */
export function matches(webhook: Pick<Webhook, 'eventTypes' | 'eventNames'>, event: Event): boolean {
  const type = webhook.eventTypes.includes(WILDCARD) || webhook.eventTypes.includes(event.type);
  const name = webhook.eventNames.includes(WILDCARD) || (event.event !== undefined && webhook.eventNames.includes(event.event));
  return type && name;
}

/** Where an event stands in acceptance order. */
export function positionOf(event: Event): Cursor {
  return { parsedAt: toEngineDateTime(parseIsoDateTime(event.parsedAt)!), uuid: event.uuid };
}

/** ClickHouse orders a UUID by its last 8 bytes, then its first 8, not by its text. */
function uuidKey(uuid: string): string {
  const hex = uuid.toLowerCase().replace(/-/g, '');
  return hex.slice(16) + hex.slice(0, 16);
}

/** Negative, zero or positive as `a` comes before, with or after `b` in acceptance order. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.parsedAt !== b.parsedAt) return a.parsedAt < b.parsedAt ? -1 : 1;
  const ka = uuidKey(a.uuid);
  const kb = uuidKey(b.uuid);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The type and name conditions of a webhook in SQL, with their bound parameters. */
function filterClause(webhook: Pick<Webhook, 'eventTypes' | 'eventNames'>): { sql: string; params: Params } {
  let sql = '';
  const params: Params = {};
  if (!webhook.eventTypes.includes(WILDCARD)) {
    sql += ' AND type IN {types:Array(String)}';
    params.types = webhook.eventTypes;
  }
  if (!webhook.eventNames.includes(WILDCARD)) {
    sql += ' AND event IN {names:Array(String)}';
    params.names = webhook.eventNames;
  }
  return { sql, params };
}

/**
 * Up to `limit` committed events a webhook wants, after `cursor` in acceptance order and, when
 * given, accepted no later than `horizon`. The plain `parsedAt >=` lets the minmax index skip
 * every part but the newest.
 */
export async function readAfter(
  storage: Storage,
  database: string,
  webhook: Pick<Webhook, 'eventTypes' | 'eventNames'>,
  cursor: Cursor,
  horizon: string | undefined,
  limit: number,
): Promise<Event[]> {
  const filter = filterClause(webhook);
  const rows = await storage.query(
    `SELECT ${EVENT_COLUMNS.join(', ')} FROM ${identifier(database)}.events
     WHERE parsedAt >= {p:DateTime64(6, 'UTC')} AND (parsedAt, uuid) > ({p:DateTime64(6, 'UTC')}, {u:UUID})
       ${horizon ? "AND parsedAt <= {h:DateTime64(6, 'UTC')}" : ''}${filter.sql}
     ORDER BY parsedAt, uuid LIMIT {limit:UInt32}`,
    { p: cursor.parsedAt, u: cursor.uuid, ...(horizon ? { h: horizon } : {}), ...filter.params, limit },
  );
  return rows.map(rowToEvent);
}

/** The events with these uuids that still exist, in acceptance order. */
export async function readByUuid(storage: Storage, database: string, uuids: readonly string[]): Promise<Event[]> {
  const rows = await storage.query(
    `SELECT ${EVENT_COLUMNS.join(', ')} FROM ${identifier(database)}.events WHERE uuid IN {uuids:Array(UUID)} ORDER BY parsedAt, uuid`,
    { uuids },
  );
  return rows.map(rowToEvent);
}
