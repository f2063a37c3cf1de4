import { botCondition } from '../events/bots';
import { filterConditions, personViewOf, propertyText, type FilterContext } from '../filters/compile';
import type { Filter } from '../filters/model';
import type { Params, Row } from '../storage/storage';
import { bindRange, type TimeRange } from './time-range';
import type { AggregateBy, Breakdown } from './model';

/**
 * What an insight's compiler is given beside its request, and the pieces of SQL every insight
 * shares. A compiler is a pure function from request and context to one statement (run in the
 * workspace's database, over `events_with_persons`) and the function that shapes its rows.
 */

export interface CompileContext extends FilterContext {
  /** The time the request is answered at, ms: relative times count from it. */
  now: number;
  /** Where the request body is in what was sent ('' for a body of its own): errors' pointers start here. */
  pointer: string;
}

export interface CompiledInsight {
  /** One statement; every user value in it is a bound parameter of `params`. */
  sql: string;
  params: Params;
  /** The answer from the statement's rows. */
  answer(rows: Row[]): unknown;
}

/** The name that matches any event. */
export const ANY_EVENT = '$any';
/** The name that matches every page view (`page` events, whatever their name). */
export const PAGEVIEW = '$pageview';

/** The condition matching events named `event` (`$any` for all, `$pageview` for page views). */
export function eventMatches(event: string, context: CompileContext): string {
  if (event === ANY_EVENT) return '1';
  if (event === PAGEVIEW) return "type = 'page'";
  return `event = ${context.params.bind(event, 'String')}`;
}

/** The condition of `filters` on events, '1' for none; `pointer` locates the list in the request. */
export function eventFilters(filters: readonly Filter[] | undefined, context: CompileContext, pointer: string): string {
  return filterConditions(filters ?? [], 'events', context, `${context.pointer}${pointer}`);
}

/**
 * The condition every event of an insight meets: its `filters` (at `/filters`), and unless
 * `includeBots`, not an automated client's (src/events/bots.ts).
 */
export function insightFilters(query: { filters?: readonly Filter[]; includeBots?: boolean }, context: CompileContext): string {
  return `${eventFilters(query.filters, context, '/filters')} AND ${botCondition(query.includeBots)}`;
}

/** The column that names who is counted: a person (stitched) or a group. */
export function actorColumn(aggregateBy: AggregateBy | undefined): 'personId' | 'groupId' {
  return aggregateBy === 'group' ? 'groupId' : 'personId';
}

/** The condition of events in `range` (its bounds bound as parameters). */
export function inRange(range: TimeRange, context: CompileContext): string {
  const { from, to } = bindRange(range, context.params);
  return `timestamp >= ${from} AND timestamp <= ${to}`;
}

/**
 * Events with the value of `breakdown` as `breakdownProperty` (the property's text, '' where it is
 * missing): a FROM clause over `events_with_persons`, joined with the `persons` or `groups` view
 * for a person or group property.
 */
export function eventsWithBreakdown(breakdown: Breakdown | undefined, context: CompileContext): string {
  if (!breakdown) return 'events_with_persons';
  const source = breakdown.source ?? 'event';
  const value = propertyText(breakdown.property, source, context.params);
  if (source === 'event') return `(SELECT *, ${value} AS breakdownProperty FROM events_with_persons)`;
  const [view, key] = source === 'person' ? [personViewOf(breakdown.property), 'personId'] : ['groups', 'groupId'];
  return `(SELECT e.*, b.breakdownProperty AS breakdownProperty FROM events_with_persons AS e
    LEFT ANY JOIN (SELECT ${key}, ${value} AS breakdownProperty FROM ${view}) AS b ON b.${key} = e.${key})`;
}

/** Breakdown values kept by default; the others are `$other`. */
export const DEFAULT_BREAKDOWN_LIMIT = 10;
/** The breakdown value the values beyond the top ones are summed under. */
export const OTHER_VALUE = '$other';

/**
 * The breakdown value of a row of `eventsWithBreakdown` as answered: its `breakdownProperty` when
 * among the `limit` most frequent values of the rows `where` selects from `from` (by events, ties
 * by value), else `$other`.
 */
export function topBreakdownValue(breakdown: Breakdown, from: string, where: string, context: CompileContext): string {
  const limit = context.params.bind(breakdown.limit ?? DEFAULT_BREAKDOWN_LIMIT, 'UInt32');
  return `if(breakdownProperty IN (SELECT breakdownProperty FROM ${from} WHERE ${where} GROUP BY breakdownProperty ORDER BY count() DESC, breakdownProperty LIMIT ${limit}), breakdownProperty, ${context.params.bind(OTHER_VALUE, 'String')})`;
}

/** The order events happen in: their time, then arrival (ties of time keep the order they were sent in). */
export const EVENT_ORDER = 'timestamp, parsedAt, uuid';

/**
 * EVENT_ORDER as one UInt256 (time, arrival, uuid), for argMin and argMax: ordering by a tuple
 * instead was 4-5× slower over 10 million events (chDB 3.4.0). Times count from 1900, the
 * earliest a DateTime64 holds, so that none is negative.
 */
export const EVENT_ORDER_KEY = `bitShiftLeft(toUInt256(toUnixTimestamp64Micro(timestamp) + 2208988800000000), 192)
  + bitShiftLeft(toUInt256(toUnixTimestamp64Micro(parsedAt) + 2208988800000000), 128) + toUInt256(toUInt128(uuid))`;
