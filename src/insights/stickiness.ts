import type { Row } from '../storage/storage';
import { checkActorSeries } from './actor-series';
import { checkIndex, type ActorsStatement } from './actors';
import { actorColumn, eventFilters, eventMatches, type CompileContext, type CompiledInsight, insightFilters } from './compile-context';
import type { StickinessActorsQuery, StickinessQuery } from './model';
import { bindRange, incompleteFrom, periodStartSql, timeRange } from './time-range';

/** Per series and actor, the number of distinct periods of the range it did the series in (`periods`). */
function actorPeriods(query: StickinessQuery, context: CompileContext) {
  checkActorSeries(query.series, query.aggregateBy, context.pointer);
  const interval = query.interval ?? 'day';
  const range = timeRange(query, interval, context.now, context.pointer);
  const { from, to, tz } = bindRange(range, context.params);
  const actor = actorColumn(query.aggregateBy);
  const matched = query.series.map((s, i) => `(${eventMatches(s.event, context)} AND ${eventFilters(s.filters, context, `/series/${i}/filters`)})`);
  const period = periodStartSql('timestamp', interval, tz);
  const where = `timestamp >= ${from} AND timestamp <= ${to} AND ${actor} != ''
      AND ${insightFilters(query, context)}`;
  // One series is grouped by actor alone: a constant series beside it cost a fifth more.
  const sql =
    matched.length === 1
      ? `SELECT 0 AS series, actor, uniqExact(period) AS periods
  FROM (SELECT ${actor} AS actor, ${period} AS period FROM events_with_persons WHERE ${where} AND ${matched[0]})
  GROUP BY actor`
      : `SELECT series, actor, uniqExact(period) AS periods
  FROM (
    SELECT arrayJoin(arrayFilter(s -> s >= 0, [${matched.map((m, i) => `if(${m}, ${i}, -1)`).join(', ')}])) AS series, ${actor} AS actor, ${period} AS period
    FROM events_with_persons
    WHERE ${where} AND (${matched.join(' OR ')})
  )
  GROUP BY series, actor`;
  return { range, sql };
}

/**
 * Stickiness: for each series and each n from 1 to the number of periods of the range, how many
 * actors did it in exactly n of those periods. One scan of the range: each event is counted for
 * every series it matches, each actor's distinct periods per series are counted, then the actors
 * per count.
 */
export function compileStickiness(query: StickinessQuery, context: CompileContext): CompiledInsight {
  const { range, sql: actors } = actorPeriods(query, context);
  const sql = `SELECT series, periods, toFloat64(count()) AS actors
FROM (
  ${actors}
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
        ...incompleteFrom(range, context.now),
      };
    },
  };
}

/** The actors behind a bar: those who did the series in exactly `count` periods of the range. */
export function stickinessActors(body: StickinessActorsQuery, context: CompileContext): ActorsStatement {
  const { query } = body;
  checkIndex(body.series, query.series.length, '/series', 'series');
  const { range, sql } = actorPeriods(query, context);
  checkIndex(body.count - 1, range.periods.length, '/count', 'periods in its range');
  return {
    sql: `SELECT actor FROM (${sql}) WHERE series = ${context.params.bind(body.series, 'UInt32')} AND periods = ${context.params.bind(body.count, 'UInt64')}`,
    key: actorColumn(query.aggregateBy),
    eventCount: false,
  };
}
