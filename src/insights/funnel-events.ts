import { toEngineDateTime } from '../timestamps';
import { actorColumn, eventFilters, eventMatches, eventsWithBreakdown, inRange, topBreakdownValue, type CompileContext, insightFilters } from './compile-context';
import { windowReach, type FunnelWindow } from './funnel-window';
import type { FunnelsQuery } from './model';
import { bindRange, type TimeRange } from './time-range';

/**
 * The events a funnel reads, one row each: its actor, and its `key`, one UInt128 that sorts as
 * events happen and carries what the walk needs: from the top, the event's time (µs since the
 * range's start, 56 bits), its arrival (parsedAt, µs since the epoch, 52 bits: the tie-breaker
 * of equal times) and its `mask` (20 bits: bit k for step k, then one bit per exclusion). Two
 * events of one actor with the same time and arrival (possible only between processes sharing a
 * ClickHouse server) come in the order of their masks.
 * With a breakdown, also its `breakdownValue` (the top values, else `$other`).
 *
 * Only events that can be part of a conversion are read: from the range's start to its end plus
 * the window, of the steps and exclusions (for a strict funnel, every event: any of them between
 * two steps breaks it), passing the request's filters. The conditions come cheapest first, as the
 * engine stops at the first that fails: a person is looked up only for the events that remain.
 */

/** Where the parts of a key start, from its lowest bit. */
const KEY_TIME_SHIFT = 72;
const KEY_ARRIVAL_SHIFT = 20;
/** The bits of a key that hold its mask. */
export const KEY_MASK = (1 << KEY_ARRIVAL_SHIFT) - 1;
/** The time of an event from its key: µs since the range's start. */
export const keyTime = (key: string) => `toInt64(bitShiftRight(${key}, ${KEY_TIME_SHIFT}))`;

export function funnelEvents(query: FunnelsQuery, window: FunnelWindow, range: TimeRange, context: CompileContext): string {
  const actor = actorColumn(query.aggregateBy);
  const source = eventsWithBreakdown(query.breakdown, context);
  const filters = insightFilters(query, context);
  const steps = query.steps.map((step, k) => `(${eventMatches(step.event, context)} AND ${eventFilters(step.filters, context, `/steps/${k}/filters`)})`);
  const exclusions = (query.exclusions ?? []).map((exclusion) => `(${eventMatches(exclusion.event, context)})`);
  const mask = [...steps, ...exclusions].map((matches, bit) => `bitShiftLeft(toUInt32(${matches}), ${bit})`).join(' + ');
  const { from } = bindRange(range, context.params);
  const reach = context.params.bind(toEngineDateTime(range.to + windowReach(window)), "DateTime64(6, 'UTC')");
  const key = `bitShiftLeft(toUInt128(toUnixTimestamp64Micro(timestamp) - toUnixTimestamp64Micro(${from})), ${KEY_TIME_SHIFT}) + bitShiftLeft(toUInt128(toUnixTimestamp64Micro(parsedAt)), ${KEY_ARRIVAL_SHIFT}) + mask`;
  return `SELECT ${actor} AS actor, ${mask} AS mask,
  ${key} AS key${breakdownColumn(query, source, steps, filters, range, context)}
FROM ${source}
WHERE timestamp >= ${from} AND timestamp <= ${reach}${query.order === 'strict' ? '' : ` AND (${[...steps, ...exclusions].join(' OR ')})`} AND ${filters} AND ${actor} != ''`;
}

/**
 * `, <value> AS breakdownValue` with a breakdown, for the events that can start a conversion
 * (first steps; for an unordered funnel, any step) within the range ('' for the others, which no
 * conversion takes its value from): the top values are those of the most such events.
 */
function breakdownColumn(query: FunnelsQuery, source: string, steps: string[], filters: string, range: TimeRange, context: CompileContext): string {
  if (!query.breakdown) return '';
  const starts = query.order === 'unordered' ? steps.join(' OR ') : steps[0];
  const inRangeStarts = `${inRange(range, context)} AND (${starts})`;
  return `,
  if(${inRangeStarts}, ${topBreakdownValue(query.breakdown, source, `${inRangeStarts} AND ${filters}`, context)}, '') AS breakdownValue`;
}
