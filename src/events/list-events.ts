import { asWritten, type PrepareStatement } from '../properties/fast-reads';
import { identifier, type Params, type Storage } from '../storage/storage';
import { EVENT_JSON_SQL } from './event-rows';
import { ORDER_FIELDS, type ListEventsQuery, type OrderField } from './model';
import { parseIsoDateTime, toEngineDateTime } from '../timestamps';
import { pageWindow } from '../http/pagination';
import { invalidInput } from '../http/problem';

const EQUALITY_FILTERS = ['event', 'uuid', 'userId', 'groupId', 'anonymousId', 'instanceId', 'type', 'messageId'] as const;
const OBJECT_FILTER = /^(properties|traits|context)\.(.+)$/;
const KNOWN = new Set<string>([...EQUALITY_FILTERS, 'startDate', 'endDate', 'limit', 'offset', 'orderByField', 'orderByDirection']);
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MICROS_PER_DAY = 86_400_000_000n;
/** Most `properties.<key>`-style filters in one listing: each is a condition in the statement. */
const MAX_OBJECT_FILTERS = 20;
/** Unknown parameters named one by one in a refusal, at most. */
const MAX_LISTED_UNKNOWN = 20;

/** The WHERE clause and its bound parameters for a listing (or an export); every value is a parameter. */
export function whereClause(query: Record<string, string | undefined>): { where: string; params: Params } {
  const conditions: string[] = [];
  const params: Params = {};
  for (const f of EQUALITY_FILTERS) {
    const v = query[f];
    if (v === undefined) continue;
    conditions.push(f === 'uuid' ? `uuid = {uuid:UUID}` : `${f} = {${f}:String}`);
    params[f] = v;
  }
  if (query.startDate !== undefined) {
    conditions.push(`timestamp >= {startDate:DateTime64(6, 'UTC')}`);
    params.startDate = toEngineDateTime(parseIsoDateTime(query.startDate)!);
  }
  if (query.endDate !== undefined) {
    // A bare date as endDate includes that whole day.
    let end = parseIsoDateTime(query.endDate)!;
    if (DATE_ONLY.test(query.endDate)) end += MICROS_PER_DAY - 1n;
    conditions.push(`timestamp <= {endDate:DateTime64(6, 'UTC')}`);
    params.endDate = toEngineDateTime(end);
  }
  let n = 0;
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (KNOWN.has(name) || value === undefined) continue;
    const m = OBJECT_FILTER.exec(name);
    if (!m) {
      unknown.push(name);
      continue;
    }
    // String values compare as text, numbers and booleans by their JSON spelling.
    const column = m[1]!;
    conditions.push(
      `(JSONExtractString(${column}, {k${n}:String}) = {v${n}:String} OR JSONExtractRaw(${column}, {k${n}:String}) = {v${n}:String})`,
    );
    params[`k${n}`] = m[2]!;
    params[`v${n}`] = value;
    n++;
  }
  if (unknown.length > 0) {
    const listed = unknown.slice(0, MAX_LISTED_UNKNOWN);
    const more = unknown.length - listed.length;
    throw invalidInput(
      `unknown query parameter${unknown.length > 1 ? 's' : ''}: ${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}`,
      listed.map((parameter) => ({
        parameter,
        detail: `is not a filter; use one of ${[...KNOWN].join(', ')}, or properties.<key>, traits.<key>, context.<key>`,
      })),
    );
  }
  if (n > MAX_OBJECT_FILTERS) {
    throw invalidInput(`${n} properties/traits/context filters; at most ${MAX_OBJECT_FILTERS} may be combined`, []);
  }
  return { where: conditions.length ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** A statement and its bound parameters. */
export interface Statement {
  sql: string;
  params: Params;
}

/** The two statements of a validated listing: one page of events, and the count of all that match. */
export function listingStatements(database: string, query: ListEventsQuery): { rows: Statement; count: Statement; limit: number; offset: number } {
  const { where, params } = whereClause(query as Record<string, string | undefined>);
  const { limit, offset } = pageWindow(query);
  const field: OrderField = query.orderByField ?? 'timestamp';
  if (!ORDER_FIELDS.includes(field)) throw new Error(`unvalidated order field ${field}`);
  const direction = (query.orderByDirection ?? 'DESC').toUpperCase() === 'ASC' ? 'ASC' : 'DESC';
  const table = `${identifier(database)}.events`;
  // uuid breaks ties so that pages do not overlap or skip when many events share a timestamp.
  const order = field === 'uuid' ? `uuid ${direction}` : `${field} ${direction}, uuid ${direction}`;
  return {
    rows: {
      sql: `SELECT ${EVENT_JSON_SQL} AS json FROM ${table} ${where} ORDER BY ${order} LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      params: { ...params, limit, offset },
    },
    count: { sql: `SELECT count() AS total FROM ${table} ${where}`, params },
    limit,
    offset,
  };
}

/**
 * Runs a validated listing: one page of events and the exact count of all that match, as the
 * JSON text of an EventsPage (each event's JSON made by the engine). `prepare` may have its
 * property filters read stored columns (src/properties/fast-reads.ts).
 */
export async function listEvents(storage: Storage, database: string, query: ListEventsQuery, prepare: PrepareStatement = asWritten): Promise<string> {
  const { rows, count, limit, offset } = listingStatements(database, query);
  const [rowsSql, countSql] = await Promise.all([prepare(rows.sql, rows.params), prepare(count.sql, count.params, false)]);
  const [events, total] = await Promise.all([storage.queryLines(rowsSql, rows.params), storage.query(countSql, count.params)]);
  return eventsPageJson(events, limit, offset, Number(total[0]?.total ?? 0));
}

/** The JSON text of an EventsPage around events' JSON texts (made by the engine, numbers as sent). */
export function eventsPageJson(events: readonly unknown[], limit: number, offset: number, total: number): string {
  return `{"results":[${events.join(',')}],"limit":${limit},"offset":${offset},"total":${total}}`;
}
