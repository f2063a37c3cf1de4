import type { SqlParams } from '../sql-params';
import type { Micros } from '../timestamps';
import type { FunnelsQuery, WindowUnit } from './model';

/**
 * A funnel's conversion window: how long after its first step a conversion may take its other
 * steps. It is added to the first step's time in UTC, as ClickHouse adds an interval: seconds to
 * weeks are fixed lengths (a day is 24 hours), months are calendar months (Jan 31 + 1 month is
 * the end of February), so the window does not depend on the request's time zone.
 */

export type FunnelWindow = NonNullable<FunnelsQuery['window']>;

export const DEFAULT_WINDOW: FunnelWindow = { value: 14, unit: 'day' };

const SECOND = 1_000_000;
const UNIT_MICROS: Record<Exclude<WindowUnit, 'month'>, number> = { second: SECOND, minute: 60 * SECOND, hour: 3600 * SECOND, day: 86_400 * SECOND, week: 7 * 86_400 * SECOND };
/** What a month may be at most, for bounds that must hold whatever the month. */
const LONGEST_MONTH_MICROS = 31 * UNIT_MICROS.day;

/** The longest window, in days (about ten years): longer ones would overflow the engine's times. */
export const MAX_WINDOW_DAYS = 3660;
const UNIT_DAYS: Record<WindowUnit, number> = { second: 1 / 86_400, minute: 1 / 1440, hour: 1 / 24, day: 1, week: 7, month: 30.5 };

/** The largest `value` a window in `unit`s may have. */
export function longestWindow(unit: WindowUnit): number {
  return Math.floor(MAX_WINDOW_DAYS / UNIT_DAYS[unit]);
}

/** The longest the window can be after any first step, µs: how far past the range events are read. */
export function windowReach(window: FunnelWindow): Micros {
  return BigInt(window.value) * BigInt(window.unit === 'month' ? LONGEST_MONTH_MICROS : UNIT_MICROS[window.unit]);
}

/** SQL of the last instant (µs, inclusive) a conversion started at `startMicros` (µs since the epoch, Int64) may reach. */
export function windowEnd(window: FunnelWindow, startMicros: string, params: SqlParams): string {
  if (window.unit === 'month') return `toUnixTimestamp64Micro(addMonths(fromUnixTimestamp64Micro(${startMicros}, 'UTC'), ${params.bind(window.value, 'UInt32')}))`;
  return `(${startMicros} + ${params.bind(window.value * UNIT_MICROS[window.unit], 'Int64')})`;
}
