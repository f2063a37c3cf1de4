import type { Row } from '../storage/storage';
import { checkActorSeries } from './actor-series';
import { actorColumn, eventFilters, eventMatches, type CompileContext, type CompiledInsight } from './compile-context';
import type { StickinessQuery } from './model';
import { bindRange, periodKey, timeRange } from './time-range';

/**
 * Stickiness: for each series and each n from 1 to the number of periods of the range, how many
 * actors did it in exactly n of those periods. One scan of the range: each event is counted for
 * every series it matches, each actor's distinct periods per series are counted, then the actors
 * per count.
 */
export function compileStickiness(query: StickinessQuery, context: CompileContext): CompiledInsight {
  checkActorSeries(query.series, query.aggregateBy, context.pointer);
  const interval = query.interval ?? 'day';
  const range = timeRange(query, interval, context.now, context.pointer);
  const { from, to, tz } = bindRange(range, context.params);
  const actor = actorColumn(query.aggregateBy);
  const matched = query.series.map((s, i) => `(${eventMatches(s.event, context)} AND ${eventFilters(s.filters, context, `/series/${i}/filters`)})`);
  const seriesOfEvent = `arrayFilter(s -> s >= 0, [${matched.map((m, i) => `if(${m}, ${i}, -1)`).join(', ')}])`;
  const sql = `SELECT series, periods, toFloat64(count()) AS actors
FROM (
  SELECT series, actor, uniqExact(period) AS periods
  FROM (
    SELECT arrayJoin(${seriesOfEvent}) AS series, ${actor} AS actor, ${periodKey('timestamp', interval, tz)} AS period
    FROM events_with_persons
    WHERE timestamp >= ${from} AND timestamp <= ${to} AND ${actor} != ''
      AND ${eventFilters(query.filters, context, '/filters')} AND (${matched.join(' OR ')})
  )
  GROUP BY series, actor
)
GROUP BY series, periods
ORDER BY series, periods`;

  const periods = range.periods.length;
  return {
    sql,
    params: context.params.values,
    answer(rows: Row[]) {
      const data = query.series.map(() => new Array<number>(periods).fill(0));
      for (const row of rows) data[Number(row.series)]![Number(row.periods) - 1] = Number(row.actors);
      return {
        results: query.series.map((s, i) => ({ label: s.event, series: i, labels: Array.from({ length: periods }, (_, n) => String(n + 1)), data: data[i]! })),
      };
    },
  };
}
