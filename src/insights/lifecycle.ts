import type { Row } from '../storage/storage';
import { checkActorSeries } from './actor-series';
import { periodIndexOf, type ActorsStatement } from './actors';
import { actorColumn, eventFilters, eventMatches, type CompileContext, type CompiledInsight, insightFilters } from './compile-context';
import { LIFECYCLE_STATUSES, type LifecycleActorsQuery, type LifecycleQuery } from './model';
import { periodIndexer } from './period-index';
import { bindRange, incompleteFrom, period, periodStart, timeRange } from './time-range';

/** Per actor and period of the range (1 to n) it was active in or went dormant in, its `status` there. */
function actorStatuses(query: LifecycleQuery, context: CompileContext) {
  checkActorSeries(query.series, query.aggregateBy, context.pointer);
  const interval = query.interval ?? 'day';
  const range = timeRange(query, interval, context.now, context.pointer);
  const { to, tz } = bindRange(range, context.params);
  const before = period(periodStart(Number(range.from / 1000n) - 1, interval, range.timezone), interval, range.timezone);
  const index = periodIndexer([before, ...range.periods], interval, tz, context.params);
  const series = query.series[0]!;
  const actor = actorColumn(query.aggregateBy);
  const n = range.periods.length;
  const sql = `SELECT actor, arrayJoin(arrayFilter(p -> p BETWEEN 1 AND ${n}, arrayDistinct(arrayConcat(active, arrayMap(p -> p + 1, active))))) AS period,
    if(has(active, period), multiIf(period = first, 'new', has(active, period - 1), 'returning', 'resurrecting'), 'dormant') AS status
  FROM (
    SELECT ${actor} AS actor, arrayFilter(p -> p >= 0, groupUniqArray(${index('timestamp')})) AS active, ${index('min(timestamp)')} AS first
    FROM events_with_persons
    WHERE timestamp <= ${to} AND ${actor} != ''
      AND ${eventMatches(series.event, context)} AND ${eventFilters(series.filters, context, '/series/0/filters')} AND ${insightFilters(query, context)}
    GROUP BY actor
  )`;
  return { range, sql };
}

/**
 * Lifecycle, as PostHog draws it: per period of the range, each actor active in it (an event of
 * the series) is `new` when its first event of the series ever falls in it, `returning` when it
 * was active in the period before, else `resurrecting`; an actor active in the period before
 * and not in this one is `dormant`, counted negative.
 *
 * Periods are numbered with the one before the range as 0 (its activity decides the range's
 * first period) and the range's as 1 to n, so "the period before" is the number before, also
 * across a daylight-saving change. Each actor's events up to the range's end are read, all
 * of them for its first event ever; only those from period 0 on make its active periods.
 */
export function compileLifecycle(query: LifecycleQuery, context: CompileContext): CompiledInsight {
  const { range, sql: statuses } = actorStatuses(query, context);
  const n = range.periods.length;
  const sql = `SELECT period, status, toFloat64(if(status = 'dormant', -count(), count())) AS actors
FROM (
  ${statuses}
)
GROUP BY period, status`;

  return {
    sql,
    params: context.params.values,
    answer(rows: Row[]) {
      const data = new Map(LIFECYCLE_STATUSES.map((status) => [status, new Array<number>(n).fill(0)]));
      for (const row of rows) data.get(row.status as (typeof LIFECYCLE_STATUSES)[number])![Number(row.period) - 1] = Number(row.actors);
      const labels = range.periods.map((p) => p.label);
      return { results: LIFECYCLE_STATUSES.map((label) => ({ label, labels, data: data.get(label)! })), ...incompleteFrom(range, context.now) };
    },
  };
}

/** The actors behind a bar: those of the given status in the period labelled `label`. */
export function lifecycleActors(body: LifecycleActorsQuery, context: CompileContext): ActorsStatement {
  const { range, sql } = actorStatuses(body.query, context);
  const index = periodIndexOf(range.periods, body.label, '/label') + 1;
  return {
    sql: `SELECT actor FROM (${sql}) WHERE period = ${context.params.bind(index, 'UInt32')} AND status = ${context.params.bind(body.status, 'String')}`,
    key: actorColumn(body.query.aggregateBy),
    eventCount: false,
  };
}
