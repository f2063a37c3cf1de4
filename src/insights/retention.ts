import type { Row } from '../storage/storage';
import { checkBreakdownValue, checkIndex, periodIndexOf, type ActorsStatement } from './actors';
import { actorColumn, DEFAULT_BREAKDOWN_LIMIT, EVENT_ORDER_KEY, eventFilters, eventMatches, eventsWithBreakdown, OTHER_VALUE, type CompileContext, type CompiledInsight, insightFilters } from './compile-context';
import type { RetentionActorsQuery, RetentionQuery } from './model';
import { bindRange, incompleteFrom, lastPeriods, type Period } from './time-range';

/**
 * Retention (docs/api/insights.md#retention): the `periods` periods ending with the one holding
 * `dateTo` each have a cohort, the actors who did the start event in it (`recurring`) or whose
 * first start event ever is in it (`first_time`); of each cohort, how many did the return event
 * in each period after it. Period 0 is the cohort itself (its size, as PostHog counts it).
 *
 * One statement, one pass over the events: numbered by period (0 the first cohort's) and grouped
 * by actor (grouping by actor and period first took 2× as long over 10 million events) into the
 * cohorts it belongs to, with its breakdown value in each, and a bit per period it returned in;
 * then a row per actor and cohort with a 0/1 per period after it, summed per value and cohort;
 * then the values beyond the top ones (by cohort members) summed as `$other`. (The engine's
 * `retention()` needs a group per actor and cohort: 8× as long.)
 */

const DEFAULT_PERIODS = 7;

/** Each period's number since a fixed point in the past, in the bound time zone (weeks from Monday). */
const PERIOD_NUMBER = { day: 'toRelativeDayNum', week: 'toRelativeWeekNum', month: 'toRelativeMonthNum' } as const;

/**
 * The periods of a retention and `actors`, a statement of a row per actor with `cohorts`, the
 * (cohort, breakdown value) it belongs to, and `returns`, the periods it returned in as bits.
 */
function retentionPlan(query: RetentionQuery, context: CompileContext) {
  const period = query.period ?? 'day';
  const count = query.periods ?? DEFAULT_PERIODS;
  const range = lastPeriods(query, period, count, context.now, context.pointer);
  const { from, to, tz } = bindRange(range, context.params);
  const periods = context.params.bind(count, 'UInt32');
  const actor = actorColumn(query.aggregateBy);
  const filters = insightFilters(query, context);
  const isStart = `${eventMatches(query.startEvent.event, context)} AND ${eventFilters(query.startEvent.filters, context, '/startEvent/filters')}`;
  const isReturn = `${eventMatches(query.returnEvent.event, context)} AND ${eventFilters(query.returnEvent.filters, context, '/returnEvent/filters')}`;
  const number = PERIOD_NUMBER[period];
  // `periodBit` of a period before the first (a first_time start) is never used; greatest() only keeps it from failing.
  const events = (where: string) => `SELECT ${actor} AS actor, toInt64(${number}(timestamp, ${tz})) - toInt64(${number}(${from}, ${tz})) AS period,
      bitShiftLeft(toUInt64(1), greatest(period, 0)) AS periodBit, ${isStart} AS isStart, ${isReturn} AS isReturn,
      ${query.breakdown ? 'breakdownProperty' : "''"} AS eventValue, ${EVENT_ORDER_KEY} AS eventOrder
    FROM ${eventsWithBreakdown(query.breakdown, context)} WHERE ${actor} != '' AND ${filters} AND ${where}`;
  // Per actor: `cohorts`, the (cohort, breakdown value) it belongs to, the value of its first start event there; `returns`, its periods as bits.
  const actors =
    query.type === 'first_time'
      ? `SELECT actor, argMinIf((period, eventValue), eventOrder, isStart) AS first, if(countIf(isStart) > 0 AND first.1 >= 0, [first], []) AS cohorts,
          groupBitOrIf(periodBit, isReturn AND period >= 0) AS returns
        FROM (${events(`timestamp <= ${to} AND ((${isStart}) OR (${isReturn} AND timestamp >= ${from}))`)}) GROUP BY actor`
      : `SELECT actor, groupBitOrIf(periodBit, isStart) AS starts,
          ${query.breakdown ? `argMinIfResample(0, ${periods}, 1)(eventValue, eventOrder, isStart, period)` : '[]'} AS firstValues,
          arrayMap(c -> (toInt64(c), ${query.breakdown ? 'firstValues[c + 1]' : "''"}), arrayFilter(c -> bitTest(starts, c), range(${periods}))) AS cohorts,
          groupBitOrIf(periodBit, isReturn) AS returns
        FROM (${events(`timestamp >= ${from} AND timestamp <= ${to} AND ((${isStart}) OR (${isReturn}))`)}) GROUP BY actor`;
  return { range, count, periods, actors };
}

export function compileRetention(query: RetentionQuery, context: CompileContext): CompiledInsight {
  const { range, periods, actors } = retentionPlan(query, context);
  const limit = context.params.bind(query.breakdown?.limit ?? DEFAULT_BREAKDOWN_LIMIT, 'UInt32');
  const sql = cohortCounts(actors, periods, limit, context.params.bind(OTHER_VALUE, 'String'));
  return { sql, params: context.params.values, answer: (rows) => ({ ...retentionAnswer(rows, range.periods, query.breakdown !== undefined), ...incompleteFrom(range, context.now) }) };
}

/**
 * Per breakdown value and cohort, from the rows of `actors`: the members, and how many of them
 * returned in each period from the cohort's to the last; values ranked by their members over all
 * cohorts (then by value), those beyond `limit` summed as `other`. The parameters are bound.
 */
function cohortCounts(actors: string, periods: string, limit: string, other: string): string {
  return `SELECT if(rank <= ${limit}, value, ${other}) AS breakdownValue, cohort, sum(members) AS size, sumForEach(returners) AS returned
    FROM (
      SELECT value, cohort, members, returners, dense_rank() OVER (ORDER BY valueMembers DESC, value) AS rank
      FROM (
        SELECT start.2 AS value, start.1 AS cohort, count() AS members,
          sumForEach(arrayMap(k -> k = 0 OR bitTest(returns, cohort + k), range(toUInt32(${periods} - cohort)))) AS returners,
          sum(members) OVER (PARTITION BY value) AS valueMembers
        FROM (${actors}) ARRAY JOIN cohorts AS start
        GROUP BY value, cohort
      )
    )
    GROUP BY breakdownValue, cohort`;
}

/**
 * The actors behind a cell: the members of a cohort (under a breakdown value, ranked as
 * `cohortCounts` ranks them) who returned in the given period after it (period 0: every member).
 */
export function retentionActors(body: RetentionActorsQuery, context: CompileContext): ActorsStatement {
  const { query } = body;
  const { range, count, actors } = retentionPlan(query, context);
  const cohort = periodIndexOf(range.periods, body.cohort, '/cohort');
  checkIndex(body.period, count - cohort, '/period', `periods after the cohort ${body.cohort}`);
  checkBreakdownValue(query.breakdown, body.breakdownValue);
  let value = '1';
  if (query.breakdown) {
    const top = `SELECT value FROM members GROUP BY value ORDER BY count() DESC, value LIMIT ${context.params.bind(query.breakdown.limit ?? DEFAULT_BREAKDOWN_LIMIT, 'UInt32')}`;
    value = `if(value IN (${top}), value, ${context.params.bind(OTHER_VALUE, 'String')}) = ${context.params.bind(body.breakdownValue!, 'String')}`;
  }
  const period = context.params.bind(body.period, 'UInt32');
  const sql = `WITH members AS (SELECT actor, start.1 AS cohort, start.2 AS value, returns FROM (${actors}) ARRAY JOIN cohorts AS start)
SELECT actor FROM members
WHERE cohort = ${context.params.bind(cohort, 'Int64')} AND (${period} = 0 OR bitTest(returns, cohort + ${period})) AND ${value}`;
  return { sql, key: actorColumn(query.aggregateBy), eventCount: false };
}

interface CohortRow {
  breakdownValue: string;
  cohort: number;
  size: number;
  returned: number[];
}

/**
 * Every cohort, also the empty ones, per breakdown value (the values by their cohorts' members,
 * `$other` last). The cohort i (from 0) of n has n - i values: up to the period holding dateTo.
 */
function retentionAnswer(rows: Row[], periods: Period[], breakdown: boolean) {
  const byValue = new Map<string, Map<number, CohortRow>>();
  for (const row of rows) {
    const r: CohortRow = { breakdownValue: String(row.breakdownValue), cohort: Number(row.cohort), size: Number(row.size), returned: (row.returned as unknown[]).map(Number) };
    if (!byValue.has(r.breakdownValue)) byValue.set(r.breakdownValue, new Map());
    byValue.get(r.breakdownValue)!.set(r.cohort, r);
  }
  const members = (value: string) => [...byValue.get(value)!.values()].reduce((sum, r) => sum + r.size, 0);
  const values = breakdown
    ? [...byValue.keys()].sort((a, b) => Number(a === OTHER_VALUE) - Number(b === OTHER_VALUE) || members(b) - members(a) || (a < b ? -1 : a > b ? 1 : 0))
    : [''];
  const results = values.flatMap((value) =>
    periods.map((p, i) => {
      const row = byValue.get(value)?.get(i);
      return {
        ...(breakdown ? { breakdownValue: value } : {}),
        cohort: p.label,
        size: row?.size ?? 0,
        values: row?.returned ?? new Array<number>(periods.length - i).fill(0),
      };
    }),
  );
  return { results };
}
