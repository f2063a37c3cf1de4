import { invalidInput } from '../http/problem';
import type { Row } from '../storage/storage';
import { breakdownCondition, checkIndex, type ActorsStatement } from './actors';
import { actorColumn, OTHER_VALUE, type CompileContext, type CompiledInsight } from './compile-context';
import { checkFunnel } from './funnel-checks';
import { funnelEvents } from './funnel-events';
import { funnelTrends } from './funnel-trends';
import { compileTimeToConvert } from './funnel-time-to-convert';
import { fromSubquery, funnelWalk } from './funnel-walk';
import { DEFAULT_WINDOW } from './funnel-window';
import type { FunnelsActorsQuery, FunnelsQuery } from './model';
import { timeRange } from './time-range';

/**
 * `POST /insights/funnels`: per breakdown value, how many actors converted to each step, and the
 * times between steps (median and average, in seconds). One statement: the events that can be
 * part of a conversion (`funnelEvents`), each actor's best conversion (`funnelWalk`), then counts
 * and times per step. The median is `quantileExactInclusive(0.5)`: the middle time, or the mean
 * of the two middle ones.
 */
export function compileFunnels(query: FunnelsQuery, context: CompileContext): CompiledInsight {
  if (query.funnelVizType === 'trends') return compileFunnelTrends(query, context);
  if (query.funnelVizType === 'time_to_convert') return compileTimeToConvert(query, walkOf(query, context, false), context);
  const walk = walkOf(query, context, false);
  const steps = [...query.steps.keys()];
  const reached = (k: number) => `depth >= ${k + 1}`;
  const ifConverted = (k: number, aggregate: string) => `if(countIf(${reached(k)}) = 0, NULL, ${aggregate})`;
  const times = steps.slice(1);
  const breakdown = query.breakdown ? 'breakdownValue,\n  ' : '';
  const order = query.breakdown ? `\nGROUP BY breakdownValue\nORDER BY breakdownValue = ${context.params.bind(OTHER_VALUE, 'String')}, counts[1] DESC, breakdownValue` : '';
  const sql = `SELECT ${breakdown}[${steps.map((k) => `countIf(${reached(k)})`).join(', ')}] AS counts,
  [${times.map((k) => ifConverted(k, `avgIf(times[${k}], ${reached(k)})`)).join(', ')}] AS averages,
  [${times.map((k) => ifConverted(k, `quantileExactInclusiveIf(0.5)(times[${k}], ${reached(k)})`)).join(', ')}] AS medians
${fromSubquery(walk)}${order}`;
  return { sql, params: context.params.values, answer: (rows) => funnelsAnswer(query, rows) };
}

/** Each actor's best conversion (`funnelWalk`), with its actor when asked. */
function walkOf(query: FunnelsQuery, context: CompileContext, withActor: boolean): string {
  checkFunnel(query, context.pointer);
  const window = query.window ?? DEFAULT_WINDOW;
  // Months: the range is not split into periods, so this only bounds its length generously.
  const range = timeRange(query, 'month', context.now, context.pointer, false);
  return funnelWalk(query, window, range, funnelEvents(query, window, range, context), context, withActor);
}

/** Conversion over time: each actor's conversions (`funnelWalk` with their starts) in the range split by `interval`. */
function compileFunnelTrends(query: FunnelsQuery, context: CompileContext): CompiledInsight {
  checkFunnel(query, context.pointer);
  const window = query.window ?? DEFAULT_WINDOW;
  const range = timeRange(query, query.interval ?? 'day', context.now, context.pointer, false);
  const walk = funnelWalk(query, window, range, funnelEvents(query, window, range, context), context, true, true);
  return funnelTrends(query, walk, range, context);
}

/** The actors behind a step: those whose best conversion reached it, or with `dropped` reached the step before and not it. */
export function funnelsActors(body: FunnelsActorsQuery, context: CompileContext): ActorsStatement {
  const { query } = body;
  checkIndex(body.step, query.steps.length, '/step', 'steps');
  if (body.dropped && body.step === 0) throw invalidInput('nobody drops at the first step', [{ pointer: '/dropped', detail: 'applies from step 1 on' }]);
  const walk = walkOf(query, context, true);
  const step = context.params.bind(body.step, 'UInt32');
  const depth = body.dropped ? `depth = ${step}` : `depth > ${step}`;
  const sql = `SELECT actor
${fromSubquery(walk)}
WHERE ${depth} AND ${breakdownCondition(query.breakdown, body.breakdownValue, context)}`;
  return { sql, key: actorColumn(query.aggregateBy), eventCount: false };
}

interface FunnelRow {
  breakdownValue?: string;
  counts: (number | string)[];
  averages: (number | null)[];
  medians: (number | null)[];
}

const fraction = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

function funnelsAnswer(query: FunnelsQuery, rows: Row[]) {
  return {
    results: (rows as unknown as FunnelRow[]).map((row) => {
      const counts = row.counts.map(Number);
      const steps = query.steps.map((step, k) => ({
        event: step.event,
        count: counts[k]!,
        conversionRate: fraction(counts[k]!, counts[0]!),
        stepConversionRate: fraction(counts[k]!, counts[k === 0 ? 0 : k - 1]!),
        medianSeconds: k === 0 ? null : row.medians[k - 1]!,
        averageSeconds: k === 0 ? null : row.averages[k - 1]!,
      }));
      return query.breakdown ? { breakdownValue: row.breakdownValue!, steps } : { steps };
    }),
  };
}
