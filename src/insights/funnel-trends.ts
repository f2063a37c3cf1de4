import type { Row } from '../storage/storage';
import type { CompileContext, CompiledInsight } from './compile-context';
import { funnelSpan } from './funnel-checks';
import { fromSubquery } from './funnel-walk';
import type { FunnelsQuery } from './model';
import { periodIndexer } from './period-index';
import { bindRange, incompleteFrom, type TimeRange } from './time-range';

/**
 * `funnelVizType: "trends"`, conversion over time (PostHog's funnel trends): per period of the
 * range, by the time of a conversion's first step, the actors who reached `funnelFromStep` in a
 * conversion started in it and, of those, who reached `funnelToStep`. An actor counts once per
 * period, by its deepest conversion started in that period (an actor may count in several).
 * `walk` is `funnelWalk` with actors and starts.
 */
export function funnelTrends(query: FunnelsQuery, walk: string, range: TimeRange, context: CompileContext): CompiledInsight {
  const { params } = context;
  const { tz } = bindRange(range, params);
  const { from, to } = funnelSpan(query);
  // A start is µs since the range's start, plus 1.
  const rangeStart = params.bind(Number(range.from), 'Int64');
  const periodOf = periodIndexer(range.periods, range.interval, tz, params);
  const startTime = `fromUnixTimestamp64Micro(toInt64(${rangeStart} + startTime - 1), 'UTC')`;
  const sql = `SELECT period, countIf(best >= ${from + 1}) AS entered, countIf(best >= ${to + 1}) AS completed
FROM (
  SELECT actor, ${periodOf(startTime)} AS period, max(startDepth) AS best
${fromSubquery(walk).replace(/^/gm, '  ')}
  ARRAY JOIN depths AS startDepth, starts AS startTime
  GROUP BY actor, period
)
WHERE period >= 0
GROUP BY period`;
  return { sql, params: params.values, answer: (rows) => trendsAnswer(range, rows, context.now) };
}

interface PeriodRow {
  period: number | string;
  entered: number | string;
  completed: number | string;
}

function trendsAnswer(range: TimeRange, rows: Row[], now: number) {
  const entered = range.periods.map(() => 0);
  const completed = range.periods.map(() => 0);
  for (const row of rows as unknown as PeriodRow[]) {
    entered[Number(row.period)] = Number(row.entered);
    completed[Number(row.period)] = Number(row.completed);
  }
  return {
    results: [{ labels: range.periods.map((p) => p.label), entered, completed, conversionRate: entered.map((e, i) => (e === 0 ? 0 : completed[i]! / e)) }],
    ...incompleteFrom(range, now),
  };
}
