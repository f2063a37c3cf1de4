import { eventPropertyNumber } from '../filters/compile';
import { invalidInput } from '../http/problem';
import type { Row } from '../storage/storage';
import { breakdownCondition, checkIndex, periodIndexOf, type ActorsStatement } from './actors';
import { eventFilters, eventMatches, eventsWithBreakdown, inRange, OTHER_VALUE, topBreakdownValue, type CompileContext, type CompiledInsight, insightFilters } from './compile-context';
import { evaluateFormula, parseFormula } from './formula';
import type { Interval, TrendMath, TrendSeries, TrendsActorsQuery, TrendsQuery } from './model';
import { bindRange, incompleteFrom, periodStartSql, previousRange, timeRange, trendSnap, wallTime, zonedInstant, type TimeRange } from './time-range';

/**
 * Trends: per series and period, a count, the actors or an aggregate of a numeric property
 * (docs/api/insights.md). One statement: a branch per series (and per range, with `compare`),
 * each grouped by breakdown value and period, with a total per breakdown value over the range.
 */

/** The active-users maths: distinct persons, over the period or over a rolling window of days. */
const ACTIVE_MATHS = new Set<TrendMath>(['dau', 'wau', 'mau']);

/**
 * The rolling window of an active-users math on an interval, in days, as PostHog counts them:
 * `wau` by day and `mau` by day or week are the persons of the 7 or 30 days ending with each
 * period's last day; `dau`, and `wau` or `mau` on intervals as long as their window, the persons
 * of the period itself (undefined).
 */
function activeWindowDays(math: TrendMath | undefined, interval: Interval): number | undefined {
  if (math === 'wau' && interval === 'day') return 7;
  if (math === 'mau' && (interval === 'day' || interval === 'week')) return 30;
  return undefined;
}

const QUANTILES: Partial<Record<TrendMath, number>> = { median: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

type Compare = 'current' | 'previous';

function aggregate(series: TrendSeries, index: number, context: CompileContext): string {
  const math = series.math ?? 'total';
  if (math === 'total') return 'count()';
  if (math === 'persons' || ACTIVE_MATHS.has(math)) return 'uniqExact(personId)';
  if (math === 'groups') return "uniqExactIf(groupId, groupId != '')";
  if (series.property === undefined) {
    throw invalidInput(`the ${math} of a series needs a numeric property`, [{ pointer: `${context.pointer}/series/${index}/property`, detail: `must name the event property to take the ${math} of` }]);
  }
  const value = eventPropertyNumber(series.property, context.params);
  const quantile = QUANTILES[math];
  // quantileExactInclusive interpolates between the two nearest values, as spreadsheets do.
  return quantile !== undefined ? `quantileExactInclusive(${quantile})(${value})` : `${math}(${value})`;
}

/**
 * The periods an event counts for under an active-users math of `days`: those whose last day is
 * one of the `days` days from the event's own.
 */
function activePeriods(days: number, interval: TimeRange['interval'], tz: string): string {
  const day = (k: string) => `(toDate(timestamp, ${tz}) + ${k})`;
  const offsets = `range(${days})`;
  if (interval === 'day') return `arrayMap(k -> toString(${day('k')}), ${offsets})`;
  if (interval === 'week') return `arrayMap(k -> toString(toMonday(${day('k')})), arrayFilter(k -> toDayOfWeek(${day('k')}) = 7, ${offsets}))`;
  return `arrayMap(k -> toString(toStartOfMonth(${day('k')})), arrayFilter(k -> toLastDayOfMonth(${day('k')}) = ${day('k')}, ${offsets}))`;
}

interface Branch {
  series: TrendSeries;
  index: number;
  /** The series' own conditions (event, its filters, the query's filters). */
  matches: string;
  range: TimeRange;
  compare: Compare;
}

/**
 * The rows a branch aggregates: its events with their `breakdownValue` and `periodStart`; under
 * an active-users math, an event's `personId` once for each `period` (key) it counts for (events
 * of the days before the range count for its first periods).
 */
function branchRows({ series, matches, range }: Branch, from: string, breakdownValue: string, context: CompileContext): string {
  const { tz } = bindRange(range, context.params);
  const days = activeWindowDays(series.math, range.interval);
  if (days === undefined) return `SELECT *, ${breakdownValue} AS breakdownValue, ${periodStartSql('timestamp', range.interval, tz)} AS periodStart FROM ${from} WHERE ${inRange(range, context)} AND ${matches}`;
  const first = wallTime(Number(range.from / 1000n), range.timezone);
  const since = zonedInstant(range.timezone, first.year, first.month, first.day - (days - 1));
  const window = bindRange({ ...range, from: BigInt(since) * 1000n }, context.params);
  return `SELECT personId, ${breakdownValue} AS breakdownValue, arrayJoin(${activePeriods(days, range.interval, tz)}) AS period
        FROM ${from} WHERE timestamp >= ${window.from} AND timestamp <= ${window.to} AND ${matches}`;
}

function branchSql(branch: Branch, from: string, breakdownValue: string, context: CompileContext): string {
  const { series, index, matches, range, compare } = branch;
  const head = `SELECT ${index} AS series, '${compare}' AS compare`;
  const rows = branchRows(branch, from, breakdownValue, context);
  if (activeWindowDays(series.math, range.interval) === undefined) {
    // Grouped by the period's start, named as `period` keys it only in the result: the totals' rows carry '' as their period.
    return `${head}, breakdownValue, if(grouping(periodStart) = 0, toString(periodStart), '') AS period, toFloat64(${aggregate(series, index, context)}) AS value
      FROM (${rows})
      GROUP BY GROUPING SETS ((breakdownValue, periodStart), (breakdownValue))`;
  }
  const keys = context.params.bind(range.periods.map((p) => p.key), 'Array(String)');
  return `${head}, breakdownValue, period, toFloat64(uniqExact(personId)) AS value
      FROM (${rows})
      WHERE has(${keys}, period) GROUP BY breakdownValue, period
    UNION ALL
    ${head}, ${breakdownValue} AS breakdownValue, '' AS period, toFloat64(uniqExact(personId)) AS value
      FROM ${from} WHERE ${inRange(range, context)} AND ${matches} GROUP BY breakdownValue`;
}

export interface TrendResult {
  label: string;
  series?: number;
  breakdownValue?: string;
  compare?: Compare;
  labels: string[];
  data: number[];
  total: number;
}

const finite = (value: unknown) => {
  const n = Number(value);
  return value !== null && Number.isFinite(n) ? n : 0;
};

/** The statement's rows by series, range and breakdown value: each period's value, and the total. */
function collect(rows: readonly Row[]) {
  const found = new Map<string, { values: Map<string, number>; total: number }>();
  for (const row of rows) {
    const key = `${row.series}\n${row.compare}\n${row.breakdownValue}`;
    let entry = found.get(key);
    if (!entry) found.set(key, (entry = { values: new Map(), total: 0 }));
    if (row.period === '') entry.total = finite(row.value);
    else entry.values.set(String(row.period), finite(row.value));
  }
  return found;
}

/** What a trends statement is made of: its ranges, a branch per series and range, the events it reads and their breakdown value. */
function trendsPlan(query: TrendsQuery, context: CompileContext) {
  const interval = query.interval ?? 'day';
  const ranges: Record<Compare, TimeRange> = { current: timeRange(query, interval, context.now, context.pointer, trendSnap(query, interval)), previous: undefined as never };
  if (query.compare) ranges.previous = previousRange(ranges.current, context.pointer);
  const compares: Compare[] = query.compare ? ['current', 'previous'] : ['current'];
  const formula = query.formula === undefined ? undefined : parseFormula(query.formula, query.series.length, `${context.pointer}/formula`);
  const shared = insightFilters(query, context);
  const from = eventsWithBreakdown(query.breakdown, context);

  const branches: Branch[] = query.series.flatMap((series, index) => {
    if ((series.math === 'wau' || series.math === 'mau') && interval === 'hour') {
      throw invalidInput(`${series.math} counts active days: it needs an interval of a day or longer`, [{ pointer: `${context.pointer}/series/${index}/math`, detail: 'wau and mau take the intervals day, week and month' }]);
    }
    const matches = `${eventMatches(series.event, context)} AND ${eventFilters(series.filters, context, `/series/${index}/filters`)} AND ${shared}`;
    return compares.map((compare) => ({ series, index, matches, range: ranges[compare], compare }));
  });
  const breakdownValue = query.breakdown
    ? topBreakdownValue(query.breakdown, from, `${inRange(ranges.current, context)} AND (${[...new Set(branches.map((b) => b.matches))].join(' OR ')})`, context)
    : "''";
  return { ranges, compares, formula, from, branches, breakdownValue };
}

/**
 * The actors behind a point of a series (of the current range): those whose events the point
 * counts (for a property math, those who did it), with how many of their events it counts.
 */
export function trendsActors(body: TrendsActorsQuery, context: CompileContext): ActorsStatement {
  const { query } = body;
  if (query.formula !== undefined) throw invalidInput("a formula's points are not counts of actors", [{ pointer: `${context.pointer}/formula`, detail: 'must be left out: ask for one of its series' }]);
  checkIndex(body.series, query.series.length, '/series', 'series');
  const { ranges, from, branches, breakdownValue } = trendsPlan(query, context);
  const branch = branches.find((b) => b.index === body.series && b.compare === 'current')!;
  const period = ranges.current.periods[periodIndexOf(ranges.current.periods, body.label, '/label')]!;
  const onGroups = branch.series.math === 'groups';
  const actor = onGroups ? 'groupId' : 'personId';
  const sql = `SELECT ${actor} AS actor, count() AS eventCount
FROM (${branchRows(branch, from, breakdownValue, context)})
WHERE ${activeWindowDays(branch.series.math, branch.range.interval) === undefined ? 'toString(periodStart)' : 'period'} = ${context.params.bind(period.key, 'String')} AND ${breakdownCondition(query.breakdown, body.breakdownValue, context)}${onGroups ? " AND groupId != ''" : ''}
GROUP BY actor`;
  return { sql, key: actor, eventCount: true, countsEvents: (branch.series.math ?? 'total') === 'total' };
}

export function compileTrends(query: TrendsQuery, context: CompileContext): CompiledInsight {
  const { ranges, compares, formula, from, branches, breakdownValue } = trendsPlan(query, context);
  const sql = branches.map((branch) => branchSql(branch, from, breakdownValue, context)).join('\nUNION ALL\n');

  return {
    sql,
    params: context.params.values,
    answer(rows) {
      const found = collect(rows);
      const values = query.breakdown ? [...new Set(rows.map((r) => String(r.breakdownValue)))] : [''];
      const totalOf = (value: string) => Math.max(...query.series.map((_, i) => found.get(`${i}\ncurrent\n${value}`)?.total ?? 0));
      values.sort((a, b) => Number(a === OTHER_VALUE) - Number(b === OTHER_VALUE) || totalOf(b) - totalOf(a) || (a < b ? -1 : a > b ? 1 : 0));
      const results: TrendResult[] = [];
      const seriesResult = (index: number, value: string, compare: Compare) => {
        const entry = found.get(`${index}\n${compare}\n${value}`);
        const periods = ranges[compare].periods;
        return { labels: periods.map((p) => p.label), data: periods.map((p) => entry?.values.get(p.key) ?? 0), total: entry?.total ?? 0 };
      };
      const decorate = (value: string, compare: Compare) => ({
        ...(query.breakdown ? { breakdownValue: value } : {}),
        ...(query.compare ? { compare } : {}),
      });
      if (formula) {
        for (const value of values) {
          for (const compare of compares) {
            const each = query.series.map((_, i) => seriesResult(i, value, compare));
            results.push({
              label: query.formula!,
              ...decorate(value, compare),
              labels: each[0]!.labels,
              data: each[0]!.data.map((_, j) => evaluateFormula(formula, each.map((s) => s.data[j]!))),
              total: evaluateFormula(formula, each.map((s) => s.total)),
            });
          }
        }
        return { results, ...incompleteFrom(ranges.current, context.now) };
      }
      query.series.forEach((series, index) => {
        for (const value of values) {
          if (!compares.some((compare) => found.has(`${index}\n${compare}\n${value}`)) && query.breakdown) continue;
          for (const compare of compares) {
            results.push({ label: series.event, series: index, ...decorate(value, compare), ...seriesResult(index, value, compare) });
          }
        }
      });
      return { results, ...incompleteFrom(ranges.current, context.now) };
    },
  };
}
