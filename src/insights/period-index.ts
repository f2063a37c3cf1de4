import type { SqlParams } from '../sql-params';
import type { Interval } from './model';
import { periodKey, type Period } from './time-range';

/**
 * The place of a time's period in a list of periods, in SQL: 0 for the first, -1 for a time in
 * none of them. A hash lookup (`transform`) rather than `indexOf`, which scans the list for every
 * row: over 3 million rows and 1,000 periods, 57 ms against 19 s (chDB 3.4.0).
 *
 * The list is bound once; the function answers the expression for any time column or aggregate.
 * `tz` is the bound time zone.
 */
export function periodIndexer(periods: readonly Period[], interval: Interval, tz: string, params: SqlParams): (time: string) => string {
  const keys = params.bind(
    periods.map((p) => p.key),
    'Array(String)',
  );
  return (time) => `transform(${periodKey(time, interval, tz)}, ${keys}, range(${periods.length}), -1)`;
}
