import type { Row } from '../storage/storage';
import type { CompileContext, CompiledInsight } from './compile-context';
import { funnelSpan } from './funnel-checks';
import { fromSubquery } from './funnel-walk';
import type { FunnelsQuery } from './model';

/**
 * `funnelVizType: "time_to_convert"` (PostHog's time to convert): of the actors whose best
 * conversion reached `funnelToStep`, the time from their `funnelFromStep` event to it (seconds),
 * as a histogram and its average and median. `binCount` bins (default the cube root of the
 * conversions, rounded up, from 1 to 60) from the shortest time rounded down to whole seconds, each
 * the range up to the longest time rounded up, divided by the bins and rounded up (at least 1 s)
 * wide; the last bin takes the longest. `walk` is `funnelWalk` (each actor's best conversion).
 */
export function compileTimeToConvert(query: FunnelsQuery, walk: string, context: CompileContext): CompiledInsight {
  const { from, to } = funnelSpan(query);
  // times[k] is the time from step k - 1 to step k (arrays count from 1).
  const seconds = [...Array(to - from).keys()].map((i) => `times[${from + 1 + i}]`).join(' + ');
  const bins = query.binCount === undefined ? 'toUInt32(least(60, greatest(1, ceil(cbrt(conversions)))))' : context.params.bind(query.binCount, 'UInt32');
  const sql = `SELECT any(conversions) AS conversions, any(average) AS average, any(median) AS median, any(low) AS low, any(width) AS width, any(binCount) AS binCount,
  groupArray(bin) AS binIndexes, groupArray(inBin) AS binCounts
FROM (
  SELECT bin, count() AS inBin, any(conversions) AS conversions, any(average) AS average, any(median) AS median, any(low) AS low, any(width) AS width, any(binCount) AS binCount
  FROM (
    SELECT *, toUInt32(least(toFloat64(binCount) - 1, floor((seconds - low) / width))) AS bin
    FROM (
      SELECT seconds, count() OVER () AS conversions, avg(seconds) OVER () AS average, quantileExactInclusive(0.5)(seconds) OVER () AS median,
        floor(min(seconds) OVER ()) AS low, ceil(max(seconds) OVER ()) AS high, ${bins} AS binCount, greatest(1, ceil((high - low) / binCount)) AS width
      FROM (
        SELECT ${seconds} AS seconds
${fromSubquery(walk).replace(/^/gm, '        ')}
        WHERE depth >= ${to + 1}
      )
    )
  )
  GROUP BY bin
)`;
  return { sql, params: context.params.values, answer: timeToConvertAnswer };
}

interface HistogramRow {
  conversions: number | string;
  average: number;
  median: number;
  low: number;
  width: number;
  binCount: number | string;
  binIndexes: Array<number | string>;
  binCounts: Array<number | string>;
}

function timeToConvertAnswer(rows: Row[]) {
  const row = rows[0] as unknown as HistogramRow | undefined;
  const conversions = Number(row?.conversions ?? 0);
  if (!row || conversions === 0) return { results: [{ conversions: 0, averageSeconds: null, medianSeconds: null, binWidthSeconds: null, bins: [] }] };
  const counts = new Map(row.binIndexes.map((b, i) => [Number(b), Number(row.binCounts[i])]));
  const bins = Array.from({ length: Number(row.binCount) }, (_, b) => ({ fromSeconds: row.low + b * row.width, count: counts.get(b) ?? 0 }));
  return { results: [{ conversions, averageSeconds: row.average, medianSeconds: row.median, binWidthSeconds: row.width, bins }] };
}
